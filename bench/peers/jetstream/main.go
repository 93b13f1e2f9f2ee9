// Command jetstream measures fluxgate beside NATS JetStream, the streaming
// store a user would otherwise pick, on the same data in one run: durable
// appends, a full read back, and point gets. Both run in this process and are
// reached over loopback TCP; each workload runs interleaved (JetStream first
// in even runs, fluxgate first in odd ones), --reps times, and the medians
// and their ratio are printed (docs/benchmarks.md, "Peer: NATS JetStream").
//
// It is a module of its own so that the server never depends on nats-server.
//
//	cd bench/peers/jetstream && go run . [--rows N] [--batch-rows N] [--keys N] [--reps N] \
//		[--codec zstd] [--in-flight 16] [--run REGEXP] [--pyarrow ../../../python/.venv/bin/python] [--reads] [--cpuprofile FILE] [--pyarrow-data FILE]
//
// --pyarrow adds pyarrow's append (ZSTD batches) and reads, beside JetStream
// in the same interleaving; --reads adds the reads that choose the scan
// default: asking for uncompressed batches, and arrow-go's Flight reader
// without the fluxgate client.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/fluxgate-io/fluxgate/bench/benchdata"
	"github.com/fluxgate-io/fluxgate/client"
)

type config struct {
	rows, batchRows, keys, reps, partitions int
	dir                                     string
	python, pyScript                        string // --pyarrow: the interpreter and peer_pyarrow.py
	pyData                                  string // where the pyarrow workloads' Arrow IPC file is kept ("": the temporary directory)
	reads                                   bool
	cpuprofile                              string
	codec                                   string // of fluxgate's log tables
	inFlight                                int    // the Go client's batches in flight
	run                                     *regexp.Regexp
}

func main() {
	var cfg config
	flag.IntVar(&cfg.rows, "rows", 2_000_000, "rows appended and read back per run")
	flag.IntVar(&cfg.batchRows, "batch-rows", 8192, "rows per record batch (one JetStream message, one fluxgate batch)")
	flag.IntVar(&cfg.keys, "keys", 200_000, "keys stored, and got once each per run, by the point-get workload")
	flag.IntVar(&cfg.reps, "reps", 3, "runs of each workload on each side; the median is reported")
	flag.IntVar(&cfg.partitions, "partitions", 4, "JetStream subjects and fluxgate buckets the appends spread over")
	flag.StringVar(&cfg.dir, "dir", "", "where to create the temporary data directory (default: the system's)")
	flag.StringVar(&cfg.python, "pyarrow", "", "a Python with pyarrow: add pyarrow's append and reads (python/.venv/bin/python, made by make venv)")
	flag.StringVar(&cfg.pyScript, "pyarrow-script", "../../../python/bench/peer_pyarrow.py", "the script of the pyarrow workloads")
	flag.StringVar(&cfg.codec, "codec", "zstd", "table.log.arrow.compression.type of fluxgate's log tables: zstd (the default), lz4_frame or none")
	flag.IntVar(&cfg.inFlight, "in-flight", client.DefaultMaxInFlight, "batches the Go client's writer sends ahead of their acknowledgements (JetStream's publisher: 64)")
	flag.StringVar(&cfg.pyData, "pyarrow-data", "", "keep the Arrow IPC file of the data that pyarrow appends at this path (for peer_pyarrow.py profile)")
	runRE := flag.String("run", "", "run only the workloads whose name matches this regular expression")
	flag.BoolVar(&cfg.reads, "reads", false, "add the reads asking for uncompressed batches and those of arrow-go's Flight reader")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run (both stores: they share the process) to this file")
	flag.Parse()
	var err error
	if cfg.run, err = regexp.Compile(*runRE); err != nil {
		fmt.Fprintln(os.Stderr, "jetstream: --run:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if cfg.cpuprofile != "" {
		f, err := os.Create(cfg.cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "jetstream: cpu profile:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(ctx, &cfg, os.Stdout, os.Stderr); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "jetstream:", err)
		os.Exit(1)
	}
}

// sample is one timed run.
type sample struct {
	n int64 // rows or keys
	d time.Duration
}

func (s sample) perS() float64 { return float64(s.n) / s.d.Seconds() }

// side is one store under test. Each method is one timed run; append makes
// what read reads.
type side interface {
	append(ctx context.Context, rep int) (sample, error)
	read(ctx context.Context) (sample, error)
	gets(ctx context.Context, rep int) (sample, error)
}

// workload is one line of the report: JetStream beside fluxgate reached
// with the Go client, or with pyarrow.
type workload struct {
	name, unit, jsNote, fgNote string
	pyarrow                    bool // needs --pyarrow
	reads                      bool // needs --reads
	run                        func(s side, ctx context.Context, rep int) (sample, error)
}

var workloads = []workload{
	{"durable append", "rows/s", "file store, SyncAlways, async publish", "log table of --codec, fsync before ack, Go client", false, false,
		side.append},
	{"full read back", "rows/s", "ordered consumer, batches decoded", "Scan, batches as stored (the default), decoded", false, false,
		readAs(""), // as stored
	},
	{"point gets", "keys/s", "KV Get, 2 goroutines", "1000-key DoExchange batches, 4 in flight", false, false,
		side.gets},
	{"full read back, none", "rows/s", "as above", "Scan asking for uncompressed batches", false, true,
		readAs("none")},
	{"full read back, arrow-go", "rows/s", "as above", "arrow-go's Flight reader, no fluxgate client, as stored", false, true,
		readPlain("")},
	{"full read back, arrow-go none", "rows/s", "as above", "arrow-go's Flight reader, no fluxgate client, none", false, true,
		readPlain("none")},
	{"durable append, pyarrow", "rows/s", "as above", "log table of --codec, pyarrow do_put, batches of its codec", true, false,
		side.append},
	{"full read back, pyarrow", "rows/s", "as above", "pyarrow do_get, as stored", true, false,
		readAs("")},
	{"full read back, pyarrow none", "rows/s", "as above", "pyarrow do_get asking for uncompressed batches", true, true,
		readAs("none")},
}

// readAs is the read of a scan asking for compression ("": as stored);
// JetStream reads as it does.
func readAs(compression string) func(s side, ctx context.Context, _ int) (sample, error) {
	return func(s side, ctx context.Context, _ int) (sample, error) {
		if r, ok := s.(interface {
			readAs(context.Context, string) (sample, error)
		}); ok {
			return r.readAs(ctx, compression)
		}
		return s.read(ctx)
	}
}

// readPlain is fluxgate's read through arrow-go's Flight reader alone;
// JetStream reads as it does.
func readPlain(compression string) func(s side, ctx context.Context, _ int) (sample, error) {
	return func(s side, ctx context.Context, _ int) (sample, error) {
		if f, ok := s.(*fluxgateSide); ok {
			return f.readPlain(ctx, compression)
		}
		return s.read(ctx)
	}
}

func run(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	if cfg.rows < 1 || cfg.batchRows < 1 || cfg.keys < 1000 || cfg.reps < 1 || cfg.partitions < 1 {
		return fmt.Errorf("want --rows, --batch-rows, --reps, --partitions ≥ 1 and --keys ≥ 1000")
	}
	tmp, err := os.MkdirTemp(cfg.dir, "fluxgate-peer-jetstream-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	data := benchdata.NewNarrow(cfg.rows, cfg.batchRows)
	defer data.Release()

	fmt.Fprintln(stderr, "starting JetStream and fluxgate, loading the keys")
	js, err := startJetStream(ctx, tmp, cfg, data)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	defer js.close()
	fg, err := startFluxgate(ctx, tmp, cfg, data)
	if err != nil {
		return fmt.Errorf("fluxgate: %w", err)
	}
	defer fg.close()
	var py *pyarrowSide
	if cfg.python != "" {
		if py, err = startPyarrow(cmp.Or(cfg.pyData, filepath.Join(tmp, "narrow.arrow")), cfg.python, cfg.pyScript, fg); err != nil {
			return fmt.Errorf("pyarrow: %w", err)
		}
	}

	type result struct {
		w      workload
		js, fg float64
	}
	var results []result
	for _, w := range workloads {
		if w.pyarrow && py == nil || w.reads && !cfg.reads || !cfg.run.MatchString(w.name) {
			continue
		}
		var other side = fg
		if w.pyarrow {
			other = py
		}
		fmt.Fprintf(stderr, "%s\n", w.name)
		var jsRuns, fgRuns []sample
		for rep := range cfg.reps {
			order := []side{js, other}
			if rep%2 == 1 {
				order = []side{other, js}
			}
			for _, s := range order {
				got, err := w.run(s, ctx, rep)
				if err != nil {
					return fmt.Errorf("%s: %w", w.name, err)
				}
				if s == side(js) {
					jsRuns = append(jsRuns, got)
				} else {
					fgRuns = append(fgRuns, got)
				}
			}
		}
		results = append(results, result{w, median(jsRuns), median(fgRuns)})
	}

	fmt.Fprintf(stdout, "fluxgate beside NATS JetStream: %d rows × %d columns in %d-row batches over %d partitions, %d keys; fluxgate's log tables %s; median of %d interleaved runs; %s %s/%s, %d CPUs\n\n",
		cfg.rows, len(benchdata.NarrowColumns), cfg.batchRows, cfg.partitions, cfg.keys, cfg.codec, cfg.reps, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKLOAD\tJETSTREAM\tFLUXGATE\tRATIO\tJETSTREAM SETUP\tFLUXGATE SETUP")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s %s\t%s %s\t%.2f\t%s\t%s\n", r.w.name, human(r.js), r.w.unit, human(r.fg), r.w.unit, r.fg/r.js, r.w.jsNote, r.w.fgNote)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if fg.table == "" {
		return nil // no append ran (--run): nothing stored to compare
	}
	jsStored, err := js.stored()
	if err != nil {
		return fmt.Errorf("stored size of JetStream: %w", err)
	}
	fgStored, err := fg.stored()
	if err != nil {
		return fmt.Errorf("stored size of fluxgate: %w", err)
	}
	fmt.Fprintf(stdout, "\nstored: JetStream %.1f MB, fluxgate %.1f MB (the last append run's stream and table)\n", float64(jsStored)/1e6, float64(fgStored)/1e6)
	return nil
}

// batchReader is what a full read drains: arrow-go's IPC and Flight readers
// and the fluxgate client's scan.
type batchReader interface {
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
}

// countRows drains r, returning the rows of its batches.
func countRows(r batchReader) (int64, error) {
	var rows int64
	for r.Next() {
		rows += r.RecordBatch().NumRows()
	}
	return rows, r.Err()
}

// fullRead is the sample of a read begun at start that returned rows, or an
// error when they are not every row of data.
func fullRead(rows int64, data *benchdata.Narrow, start time.Time) (sample, error) {
	if rows != data.Rows {
		return sample{}, fmt.Errorf("read %d rows, want %d", rows, data.Rows)
	}
	return sample{n: rows, d: time.Since(start)}, nil
}

func median(s []sample) float64 {
	v := make([]float64, len(s))
	for i := range s {
		v[i] = s[i].perS()
	}
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f K", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
