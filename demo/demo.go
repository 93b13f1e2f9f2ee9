// Package demo is fluxgate demo: it starts a server in process on a
// temporary directory and runs the five stories of the seed end to end
// (stories.go), printing for each what it does and the tables it produces.
// It is the quickstart's "see it work" command: no setup, a few seconds,
// readable output. cmd/fluxgate wires it in as a verb.
package demo

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/fluxgate-io/fluxgate/server"
	"github.com/peterbourgon/ff/v4"
)

const demoUsage = "demo [--keep DIR] [--quiet]"

// Main runs fluxgate demo with args, printing to stdout and stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.Run(ctx, Command(stdout, stderr), args, stderr)
}

// Command is fluxgate demo, printing to stdout and stderr.
func Command(stdout, stderr io.Writer) *ff.Command {
	var keep string
	var quiet bool
	fs := cli.NewFlagSet("demo")
	fs.StringVar(&keep, "keep", "", "use DIR as the data directory (new or empty) and keep it afterwards; serve it with fluxgate serve --data DIR")
	fs.BoolVar(&quiet, "quiet", false, "print only the story titles and the tables, no narration")
	return &ff.Command{Name: "demo", Usage: "fluxgate " + demoUsage, Flags: fs,
		ShortHelp: "run the five stories end to end against an embedded server",
		Exec: func(ctx context.Context, pos []string) error {
			if len(pos) > 0 {
				return cli.UsageError(fmt.Errorf("unexpected argument %q", pos[0]))
			}

			data := keep
			if keep == "" {
				tmp, err := os.MkdirTemp("", "fluxgate-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				data = filepath.Join(tmp, "data")
			} else if entries, err := os.ReadDir(keep); err == nil && len(entries) > 0 {
				return fmt.Errorf("--keep %s: the directory is not empty; give a new or empty one", keep)
			}

			start := time.Now()
			log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			srv, err := server.Start(ctx, &server.Config{
				Data:             data,
				Listen:           "127.0.0.1:0",
				MaxMessageBytes:  64 << 20,
				DefaultBucketNum: 1,
				SegmentBytes:     64 << 20,
			}, log)
			if err != nil {
				return err
			}
			defer func() {
				if err := srv.Stop(); err != nil {
					log.Warn("stopping the server", "err", err)
				}
			}()
			cl, err := client.Dial(ctx, srv.FlightAddr())
			if err != nil {
				return err
			}
			defer cl.Close()

			d := &demo{ctx: ctx, cl: cl, out: stdout, quiet: quiet, mem: memory.NewGoAllocator()}
			d.say("fluxgate demo: an embedded server on %s (data in %s).", srv.FlightAddr(), data)
			d.say("Five stories of streaming storage with Fluss semantics, each against real tables over Arrow Flight.")
			for i, s := range demoStories {
				if err := ctx.Err(); err != nil {
					return err
				}
				fmt.Fprintf(d.out, "\n== %d. %s ==\n", i+1, s.title)
				if err := s.run(d); err != nil {
					return fmt.Errorf("story %d (%s): %w", i+1, s.title, err)
				}
			}
			fmt.Fprintln(d.out)
			d.say("Done in %s.", time.Since(start).Round(time.Millisecond))
			if keep != "" {
				d.say("The data is kept in %s: fluxgate serve --data %s, then fluxgate scan --table fluss.orders.", keep, keep)
			}
			return nil

		}}
}

// demo is the state the stories share: the client of the embedded server and
// where they print.
type demo struct {
	ctx   context.Context
	cl    *client.Client
	out   io.Writer
	quiet bool
	mem   memory.Allocator
}

// say prints a line of narration (not with --quiet).
func (d *demo) say(format string, args ...any) {
	if !d.quiet {
		fmt.Fprintf(d.out, format+"\n", args...)
	}
}

// note prints a result line: printed with --quiet too, like the tables.
func (d *demo) note(format string, args ...any) {
	fmt.Fprintf(d.out, format+"\n", args...)
}

// create creates a table in the database fluss with one bucket (so that a
// changelog reads in write order) and returns its columns as fields of a
// write.
func (d *demo) create(spec client.TableSpec) ([]arrow.Field, error) {
	if spec.Options == nil {
		spec.Options = map[string]string{}
	}
	spec.Options["bucket.num"] = "1"
	if _, err := d.cl.CreateTable(d.ctx, spec, false); err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(spec.Columns))
	for i, c := range spec.Columns {
		fields[i] = demoField(c.Name, c.Type)
	}
	return fields, nil
}

// demoField is a column of a write: its name and SQL type.
func demoField(name, sqlType string) arrow.Field {
	dt, err := client.ArrowType(sqlType)
	if err != nil {
		panic(fmt.Sprintf("demo column %s: %v", name, err)) // the demo's types are fixed
	}
	return arrow.Field{Name: name, Type: dt, Nullable: true}
}

// record builds a record batch of rows (nil is NULL) with the given columns.
func (d *demo) record(fields []arrow.Field, rows [][]any) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(d.mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, row := range rows {
		for i, v := range row {
			fb := b.Field(i)
			if v == nil {
				fb.AppendNull()
				continue
			}
			ok := false
			switch fb := fb.(type) {
			case *array.Int64Builder:
				ok = appendAs[int64](fb, v)
			case *array.Int32Builder:
				ok = appendAs[int32](fb, v)
			case *array.Float64Builder:
				ok = appendAs[float64](fb, v)
			case *array.StringBuilder:
				ok = appendAs[string](fb, v)
			case *array.BinaryBuilder:
				ok = appendAs[[]byte](fb, v)
			}
			if !ok {
				return nil, fmt.Errorf("column %s: cannot write %T", fields[i].Name, v)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// appendAs appends v to b if v is a T, and says whether it was.
func appendAs[T any](b interface{ Append(T) }, v any) bool {
	x, ok := v.(T)
	if ok {
		b.Append(x)
	}
	return ok
}

// write writes rows through one stream, one batch per element of batches,
// and returns the end offset of each bucket the writes touched.
func (d *demo) write(req client.WriteRequest, fields []arrow.Field, batches ...[][]any) (map[int]int64, error) {
	w, err := d.cl.NewWriter(d.ctx, req)
	if err != nil {
		return nil, err
	}
	ends := map[int]int64{}
	for _, rows := range batches {
		rec, err := d.record(fields, rows)
		if err != nil {
			w.Close()
			return nil, err
		}
		res, err := w.Write(rec)
		rec.Release()
		if err != nil {
			w.Close()
			return nil, err
		}
		for b, off := range res.Buckets {
			ends[b] = max(ends[b], off)
		}
	}
	return ends, w.Close()
}

// read reads a table (or view) whole and returns its columns' names and its
// rows rendered as text, sorted by the column sortBy ("" keeps the order).
// render overrides how a column is rendered.
func (d *demo) read(table string, cols []string, sortBy string, render map[string]func(arrow.Array, int) string) ([]string, [][]string, error) {
	tbl, err := d.cl.ReadAll(d.ctx, client.ScanRequest{Table: table})
	if err != nil {
		return nil, nil, err
	}
	defer tbl.Release()
	schema := tbl.Schema()
	if cols == nil {
		for _, f := range schema.Fields() {
			cols = append(cols, f.Name)
		}
	}
	idx := make([]int, len(cols))
	for i, c := range cols {
		found := schema.FieldIndices(c)
		if len(found) == 0 {
			return nil, nil, fmt.Errorf("%s has no column %s (it has %s)", table, c, schema)
		}
		idx[i] = found[0]
	}
	var rows [][]string
	tr := array.NewTableReader(tbl, 1024)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for r := 0; r < int(rec.NumRows()); r++ {
			row := make([]string, len(cols))
			for i, c := range cols {
				col := rec.Column(idx[i])
				if f := render[c]; f != nil && !col.IsNull(r) {
					row[i] = f(col, r)
				} else {
					row[i] = cli.FormatValue(col, r)
				}
			}
			rows = append(rows, row)
		}
	}
	if err := tr.Err(); err != nil {
		return nil, nil, err
	}
	if sortBy != "" {
		k := slices.Index(cols, sortBy)
		if k < 0 {
			return nil, nil, fmt.Errorf("sort by %s: not among the columns %v", sortBy, cols)
		}
		slices.SortStableFunc(rows, func(a, b []string) int { return compareCells(a[k], b[k]) })
	}
	return cols, rows, nil
}

// compareCells orders numbers numerically and the rest as text.
func compareCells(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

// show reads a table and prints it under a caption.
func (d *demo) show(caption, table string, cols []string, sortBy string) error {
	header, rows, err := d.read(table, cols, sortBy, nil)
	if err != nil {
		return err
	}
	return d.table(caption, header, rows)
}

// table prints rows under a caption as an aligned text table.
func (d *demo) table(caption string, header []string, rows [][]string) error {
	fmt.Fprintf(d.out, "\n  %s\n", caption)
	indented := make([]string, len(header))
	copy(indented, header)
	if len(indented) > 0 {
		indented[0] = "    " + indented[0]
	}
	body := make([][]string, len(rows)+1)
	widths := make([]int, len(header))
	for i, h := range indented {
		widths[i] = utf8.RuneCountInString(h)
	}
	for i, r := range rows {
		body[i+1] = slices.Clone(r)
		if len(r) > 0 {
			body[i+1][0] = "    " + r[0]
		}
		for j, v := range body[i+1] {
			widths[j] = max(widths[j], utf8.RuneCountInString(v))
		}
	}
	body[0] = make([]string, len(header))
	for i, w := range widths {
		body[0][i] = strings.Repeat("-", w)
	}
	if len(header) > 0 {
		body[0][0] = "    " + strings.Repeat("-", widths[0]-4)
	}
	return cli.WriteAligned(d.out, indented, body)
}
