package main

// fluxgate put: write a CSV, JSON lines, Parquet or Arrow file to a table.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/util"
	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/peterbourgon/ff/v4"
)

const putUsage = "put --table T [--format csv|jsonl|parquet|arrow] [--mode append|upsert|delete|changelog] [--columns a,b] [--batch-rows N] FILE|-"

// putFlags are the flags of put.
type putFlags struct {
	table       string
	format      string
	mode        string
	batchRows   int
	columns     string
	noHeader    bool
	writerID    string
	compression string
}

func putCommand(std stdio) *ff.Command {
	var f putFlags
	var conn connFlags
	fs := cli.NewFlagSet("put")
	conn.register(fs.FlagSet)
	fs.StringVar(&f.table, "table", "", "the table to write, database.table")
	fs.StringVar(&f.format, "format", "", "input format: csv, jsonl, parquet or arrow (default: from the file extension)")
	fs.StringVar(&f.mode, "mode", "", "write mode: append (log tables), upsert, delete or changelog (default: the table's: append or upsert)")
	fs.IntVar(&f.batchRows, "batch-rows", 65536, "rows per record batch read from CSV and JSON (and Parquet); each batch is one atomic write")
	fs.StringVar(&f.columns, "columns", "", "partial update: write only these columns, comma-separated (must include the primary key)")
	fs.BoolVar(&f.noHeader, "no-header", false, "the CSV has no header line: its columns are --columns or the table's, in order")
	fs.StringVar(&f.writerID, "writer-id", "", "idempotent writer id (batches get sequences from 0)")
	fs.StringVar(&f.compression, "compression", "", "IPC compression of the batches sent: none, lz4_frame or zstd")
	return &ff.Command{Name: "put", Usage: "fluxgate " + putUsage, ShortHelp: "write a CSV, JSON lines, Parquet or Arrow file to a table", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			if len(pos) != 1 {
				return cli.UsageError(errors.New("want one input file (or - for stdin)"))
			}
			if f.table == "" {
				return cli.UsageError(errors.New("--table is required"))
			}
			switch client.WriteMode(f.mode) {
			case "", client.ModeAppend, client.ModeUpsert, client.ModeDelete, client.ModeChangelog:
			default:
				return fmt.Errorf("unknown --mode %q: want append, upsert, delete or changelog", f.mode)
			}
			path := pos[0]
			format, err := detectFormat(path, f.format)
			if err != nil {
				return err
			}

			c, info, tableSchema, err := conn.dialTable(ctx, f.table)
			if err != nil {
				return err
			}
			defer c.Close()
			columns := splitList(f.columns)
			skip := info.AutoIncrementColumns()
			if f.mode == string(client.ModeChangelog) {
				// The changelog mode's batches carry the change type first.
				tableSchema = prependChangeType(tableSchema)
			}
			in, err := openInput(ctx, path, std.in, tableSchema, inputOptions{
				format: format, batchRows: f.batchRows, columns: columns, skip: skip, noHeader: f.noHeader, mem: c.Allocator(),
				sqlTypes: sqlTypes(info),
			})
			if err != nil {
				return err
			}
			defer in.Release()

			req := client.WriteRequest{Table: f.table, Mode: client.WriteMode(f.mode), Columns: columns, WriterID: f.writerID}
			var wopts []client.WriterOption
			if f.compression != "" {
				wopts = append(wopts, client.WithWriteCompression(f.compression))
			}
			sum, err := writeAll(ctx, c, req, in, newProgress(std.err, std.errTerminal), wopts...)
			if err != nil {
				if sum.rows > 0 {
					fmt.Fprintf(std.err, "fluxgate put: %s in %s were written before the error\n", plural(sum.rows, "row"), plural(sum.batches, "batch"))
				}
				return err
			}
			printPutSummary(std.out, f.table, sum)
			return nil

		}}
}

// sqlTypes maps the table's columns to their SQL types, for input errors.
func sqlTypes(info *client.TableInfo) map[string]string {
	types := make(map[string]string, len(info.Columns))
	for _, c := range info.Columns {
		types[c.Name] = c.Type
	}
	return types
}

// prependChangeType adds the _change_type column that the batches of a
// changelog-mode write carry (PROTOCOL.md §5).
func prependChangeType(s *arrow.Schema) *arrow.Schema {
	fields := append([]arrow.Field{{Name: protocol.ColChangeType, Type: arrow.BinaryTypes.String}}, s.Fields()...)
	return arrow.NewSchema(fields, nil)
}

// putSummary is what a put wrote.
type putSummary struct {
	rows    int64
	batches int64
	offsets map[int]int64 // bucket → log end offset after the last batch
	elapsed time.Duration
}

// writeAll sends every record of in through one writer, collecting the
// results concurrently so that many batches are in flight.
func writeAll(ctx context.Context, c *client.Client, req client.WriteRequest, in *inputReader, prog *progress, opts ...client.WriterOption) (putSummary, error) {
	start := time.Now()
	sum := putSummary{offsets: map[int]int64{}}
	w, err := c.NewWriter(ctx, req, opts...)
	if err != nil {
		return sum, err
	}
	var (
		mu      sync.Mutex
		recvErr error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			res, err := w.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					mu.Lock()
					recvErr = err
					mu.Unlock()
				}
				return
			}
			mu.Lock()
			sum.rows += res.Rows
			sum.batches += int64(res.Batches)
			for b, off := range res.Buckets {
				if off > sum.offsets[b] {
					sum.offsets[b] = off
				}
			}
			rows := sum.rows
			mu.Unlock()
			prog.acked(rows)
		}
	}()
	prog.start()
	var sendErr error
	for in.Next() {
		rec := in.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		if sendErr = w.Send(rec); sendErr != nil {
			break
		}
		prog.sent(util.TotalRecordSize(rec))
	}
	inErr := in.Err()
	if inErr != nil || sendErr != nil {
		// Stop: what was sent is acknowledged or fails; nothing more goes out.
		_ = w.CloseSend()
	} else if err := w.CloseSend(); err != nil {
		sendErr = err
	}
	<-done
	closeErr := w.Close()
	prog.finish()
	sum.elapsed = time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	switch {
	case recvErr != nil:
		return sum, recvErr
	case sendErr != nil:
		return sum, sendErr
	case inErr != nil:
		return sum, inErr
	case closeErr != nil:
		return sum, closeErr
	}
	return sum, nil
}

func printPutSummary(w io.Writer, table string, sum putSummary) {
	rate := ""
	if secs := sum.elapsed.Seconds(); secs > 0 {
		rate = fmt.Sprintf(", %s rows/s", cli.HumanCount(float64(sum.rows)/secs))
	}
	fmt.Fprintf(w, "wrote %s in %s to %s in %s%s\n", plural(sum.rows, "row"), plural(sum.batches, "batch"), table, sum.elapsed.Round(time.Millisecond), rate)
	if len(sum.offsets) > 0 {
		fmt.Fprintf(w, "bucket end offsets: %s\n", formatOffsets(sum.offsets))
	}
}

// formatOffsets renders bucket → offset as "0:124 1:90", in bucket order.
func formatOffsets(m map[int]int64) string {
	keys := make([]int, 0, len(m))
	for b := range m {
		keys = append(keys, b)
	}
	sort.Ints(keys)
	parts := make([]string, len(keys))
	for i, b := range keys {
		parts[i] = fmt.Sprintf("%d:%d", b, m[b])
	}
	return strings.Join(parts, " ")
}

// plural renders "1 row", "2 rows", "1 batch", "3 batches".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// progress draws "rows, MB, rows/s" on stderr, at most every 200 ms, once a
// write has taken more than a second, and only on a terminal.
type progress struct {
	w       io.Writer
	enabled bool
	begin   time.Time
	stop    chan struct{}
	stopped chan struct{}

	mu    sync.Mutex
	rows  int64
	bytes int64
	shown bool
}

func newProgress(w io.Writer, terminal bool) *progress {
	return &progress{w: w, enabled: terminal}
}

func (p *progress) start() {
	p.begin = time.Now()
	if !p.enabled {
		return
	}
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.stopped)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				if time.Since(p.begin) >= time.Second {
					p.draw()
				}
			}
		}
	}()
}

func (p *progress) acked(rows int64) {
	p.mu.Lock()
	p.rows = rows
	p.mu.Unlock()
}

func (p *progress) sent(bytes int64) {
	p.mu.Lock()
	p.bytes += bytes
	p.mu.Unlock()
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	secs := time.Since(p.begin).Seconds()
	fmt.Fprintf(p.w, "\r\x1b[K%d rows, %.1f MB, %s rows/s", p.rows, float64(p.bytes)/(1<<20), cli.HumanCount(float64(p.rows)/secs))
	p.shown = true
}

// finish stops the progress line and clears it.
func (p *progress) finish() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	<-p.stopped
	p.stop = nil
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
