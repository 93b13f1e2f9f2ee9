// Package bench is the benchmark suite of fluxgate bench: it starts a
// server in process on a temporary directory and runs the standard
// workloads, each beside its baseline in the same run (docs/benchmarks.md:
// these machines are shared VMs, so only ratios against a baseline measured
// in the same run mean anything).
//
// Each workload runs its baseline and its fluxgate measurement interleaved
// (baseline first in even runs, fluxgate first in odd ones), --reps times,
// and reports the median of each side. The workloads are the benchWorkloads
// table (workloads.go); the data they use is in data.go, and the baseline
// Flight server in baseline_server.go. cmd/fluxgate wires it in as a verb.
package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/fluxgate-io/fluxgate/bench/benchdata"
	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/server"
)

const benchUsage = "bench [--rows N] [--batch-rows N] [--keys N] [--reps N] [--run REGEXP] [--json] [--quick] [--dir DIR] [--cpuprofile FILE]"

// benchConfig is the flags of bench.
type benchConfig struct {
	rows       int
	batchRows  int
	keys       int
	reps       int
	run        string
	json       bool
	quick      bool
	dir        string
	cpuprofile string
}

// Sizes of --quick (flags given explicitly still win): a run takes about ten
// seconds on a 2-core VM; the defaults take about 40.
const (
	benchQuickRows = 512 << 10
	benchQuickKeys = 200_000
)

// Main runs fluxgate bench with args, printing to stdout and stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg benchConfig
	fs := cli.NewFlagSet("bench", benchUsage)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.rows, "rows", 2_000_000, "rows of the event table (append, scan, projection and filter workloads)")
	fs.IntVar(&cfg.batchRows, "batch-rows", 16384, "rows per record batch written")
	fs.IntVar(&cfg.keys, "keys", 1_000_000, "keys of the primary-key workloads (lookups look up keys/5 of them per run)")
	fs.IntVar(&cfg.reps, "reps", 3, "runs of each workload and of its baseline; the median is reported")
	fs.StringVar(&cfg.run, "run", "", "run only the workloads whose name matches this regular expression")
	fs.BoolVar(&cfg.json, "json", false, "print a JSON array instead of a table")
	fs.BoolVar(&cfg.quick, "quick", false, fmt.Sprintf("small sizes (--rows %d --keys %d unless given): under a minute", benchQuickRows, benchQuickKeys))
	fs.StringVar(&cfg.dir, "dir", "", "where to create the temporary data directory (default: the system's temporary directory)")
	fs.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the workloads' runs (baselines included) to this file, for go tool pprof")
	pos, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q", pos[0])
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if cfg.quick {
		if !given["rows"] {
			cfg.rows = benchQuickRows
		}
		if !given["keys"] {
			cfg.keys = benchQuickKeys
		}
	}
	switch {
	case cfg.rows < 100:
		return fmt.Errorf("--rows %d: want at least 100 (the filter selects 1 %%)", cfg.rows)
	case cfg.batchRows < 1:
		return fmt.Errorf("--batch-rows %d: want at least 1", cfg.batchRows)
	case cfg.keys < benchdata.LookupBatch:
		return fmt.Errorf("--keys %d: want at least %d", cfg.keys, benchdata.LookupBatch)
	case cfg.reps < 1:
		return fmt.Errorf("--reps %d: want at least 1", cfg.reps)
	}
	re, err := regexp.Compile(cfg.run)
	if err != nil {
		return fmt.Errorf("--run: %w", err)
	}
	var selected []benchWorkload
	for _, w := range benchWorkloads {
		if re.MatchString(w.name) {
			selected = append(selected, w)
		}
	}
	if len(selected) == 0 {
		var names []string
		for _, w := range benchWorkloads {
			names = append(names, w.name)
		}
		return fmt.Errorf("--run %q matches no workload; the workloads are %s", cfg.run, strings.Join(names, ", "))
	}

	env, err := newBenchEnv(ctx, &cfg, stderr)
	if err != nil {
		return err
	}
	defer env.close()
	if cfg.cpuprofile != "" {
		stop, err := startCPUProfile(cfg.cpuprofile)
		if err != nil {
			return err
		}
		defer stop()
	}
	var results []benchResult
	for _, w := range selected {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench: %s\n", w.name)
		r, err := env.runWorkload(ctx, w)
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		results = append(results, r)
	}
	if cfg.json {
		return cli.WriteJSON(stdout, results)
	}
	return writeBenchTable(stdout, env, results)
}

// benchSample is one timed measurement: the rows it covered and the bytes of
// Arrow column data it moved.
type benchSample struct {
	rows  int64
	bytes int64
	d     time.Duration
}

func (s benchSample) rowsPerS() float64 { return float64(s.rows) / s.d.Seconds() }
func (s benchSample) mbPerS() float64   { return float64(s.bytes) / 1e6 / s.d.Seconds() }

// benchResult is one line of the report (and one object of --json).
type benchResult struct {
	Workload         string  `json:"workload"`
	RowsPerS         float64 `json:"rows_per_s"`
	MBPerS           float64 `json:"mb_per_s"`
	Baseline         string  `json:"baseline"`
	BaselineRowsPerS float64 `json:"baseline_rows_per_s"`
	Ratio            float64 `json:"ratio"`
	Notes            string  `json:"notes"`
	// StoredBytes is the size of the table's directory after the workload
	// (append workloads).
	StoredBytes int64 `json:"stored_bytes,omitempty"`
}

// runWorkload runs w's baseline and measurement interleaved, cfg.reps times.
func (e *benchEnv) runWorkload(ctx context.Context, w benchWorkload) (benchResult, error) {
	r := benchResult{Workload: w.name, Baseline: w.baseline, Notes: w.notes}
	if w.prepare != nil {
		if err := w.prepare(ctx, e); err != nil {
			return r, err
		}
	}
	var base, fg []benchSample
	for rep := range e.cfg.reps {
		order := []bool{false, true} // false: baseline
		if rep%2 == 1 {
			order = []bool{true, false}
		}
		for _, fluxgate := range order {
			if err := ctx.Err(); err != nil {
				return r, err
			}
			var s benchSample
			var err error
			if fluxgate {
				s, err = w.measure(ctx, e, rep)
				fg = append(fg, s)
			} else {
				s, err = w.base(ctx, e, rep)
				base = append(base, s)
			}
			if err != nil {
				return r, err
			}
			if s.rows <= 0 || s.d <= 0 {
				return r, fmt.Errorf("a run measured %d rows in %v", s.rows, s.d)
			}
		}
	}
	r.RowsPerS = benchMedian(fg, benchSample.rowsPerS)
	r.MBPerS = benchMedian(fg, benchSample.mbPerS)
	r.BaselineRowsPerS = benchMedian(base, benchSample.rowsPerS)
	r.Ratio = r.RowsPerS / r.BaselineRowsPerS
	if w.finish != nil {
		w.finish(e, &r)
	}
	return r, nil
}

// benchMedian is the median of f over samples.
func benchMedian(samples []benchSample, f func(benchSample) float64) float64 {
	v := make([]float64, len(samples))
	for i, s := range samples {
		v[i] = f(s)
	}
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// writeBenchTable prints the report: a line on the setup, the table, and the
// stored size of the log with and without compression.
func writeBenchTable(w io.Writer, e *benchEnv, results []benchResult) error {
	cfg := e.cfg
	fmt.Fprintf(w, "fluxgate bench: %s events × %d columns in %s-row batches, %s keys; median of %d interleaved runs; %s %s/%s, %d CPUs\n\n",
		benchInt(int64(cfg.rows)), len(benchEventColumns), benchInt(int64(cfg.batchRows)), benchInt(int64(cfg.keys)), cfg.reps,
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	header := []string{"WORKLOAD", "ROWS/S", "MB/S", "BASELINE", "BASELINE ROWS/S", "RATIO", "NOTES"}
	var rows [][]string
	for _, r := range results {
		rows = append(rows, []string{r.Workload, cli.HumanCount(r.RowsPerS), fmt.Sprintf("%.1f", r.MBPerS), r.Baseline,
			cli.HumanCount(r.BaselineRowsPerS), fmt.Sprintf("%.2f", r.Ratio), r.Notes})
	}
	if err := cli.WriteAligned(w, header, rows); err != nil {
		return err
	}
	if line := e.compressionLine(); line != "" {
		fmt.Fprintf(w, "\n%s\n", line)
	}
	return nil
}

// benchInt formats n with thousands separators.
func benchInt(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// benchEnv is what the workloads share: the embedded server and a client of
// it, the baseline server, the data, and the tables already loaded.
type benchEnv struct {
	cfg *benchConfig
	log *slog.Logger
	tmp string
	srv *server.Server
	fg  *client.Client

	base    *benchBaselineServer // started on first use
	baseCl  *client.Client
	pebble  *kv.Store // the raw pebble baseline, opened on first use
	events  *benchEvents
	narrow  *benchdata.Narrow
	tables  map[string]benchTable // the loaded event table of each compression
	stored  map[string]int64      // stored size of the event table of each compression
	kvState *benchKV
	agg     *benchAgg
}

// benchTable is an event table on the server.
type benchTable struct {
	name string
	id   int64
}

func newBenchEnv(ctx context.Context, cfg *benchConfig, stderr io.Writer) (*benchEnv, error) {
	tmp, err := os.MkdirTemp(cfg.dir, "fluxgate-bench-")
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := server.Start(ctx, &server.Config{
		Data:            filepath.Join(tmp, "data"),
		Listen:          "127.0.0.1:0",
		MaxMessageBytes: 64 << 20,
		BucketNum:       1,
		SegmentBytes:    256 << 20,
	}, log)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	e := &benchEnv{cfg: cfg, log: log, tmp: tmp, srv: srv, tables: map[string]benchTable{}, stored: map[string]int64{}}
	if e.fg, err = client.Dial(context.Background(), srv.FlightAddr()); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *benchEnv) close() {
	if e.fg != nil {
		e.fg.Close()
	}
	if e.baseCl != nil {
		e.baseCl.Close()
	}
	if e.base != nil {
		e.base.stop()
	}
	if e.pebble != nil {
		e.pebble.Close()
	}
	if err := e.srv.Stop(); err != nil {
		e.log.Warn("stopping the server", "err", err)
	}
	os.RemoveAll(e.tmp)
}

// tableDir is the directory of a table's data in the server's data directory.
func (e *benchEnv) tableDir(id int64) string {
	return filepath.Join(e.tmp, "data", "tables", fmt.Sprint(id))
}

// baseline returns a client of the baseline Flight server, starting it.
func (e *benchEnv) baseline() (*client.Client, error) {
	if e.baseCl != nil {
		return e.baseCl, nil
	}
	ev := e.eventData()
	srv, err := startBenchBaselineServer(ev.recs)
	if err != nil {
		return nil, err
	}
	e.base = srv
	if e.baseCl, err = client.Dial(context.Background(), srv.addr); err != nil {
		return nil, err
	}
	return e.baseCl, nil
}

// pebbleStore returns the raw pebble baseline store, opening it.
func (e *benchEnv) pebbleStore() (*kv.Store, error) {
	if e.pebble != nil {
		return e.pebble, nil
	}
	s, err := kv.Open(filepath.Join(e.tmp, "pebble"), kv.Options{})
	if err != nil {
		return nil, err
	}
	e.pebble = s
	return s, nil
}

// compressionLine reports the stored size of the event table with and
// without compression, once both were measured.
func (e *benchEnv) compressionLine() string {
	none, zstd := e.stored["none"], e.stored["zstd"]
	if none == 0 || zstd == 0 {
		return ""
	}
	return fmt.Sprintf("stored log size of the event table (its tables/<id> directory): none %.1f MB, zstd %.1f MB: zstd/none = %.3f",
		float64(none)/1e6, float64(zstd)/1e6, float64(zstd)/float64(none))
}

// startCPUProfile profiles the process into file until stop is called.
func startCPUProfile(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
