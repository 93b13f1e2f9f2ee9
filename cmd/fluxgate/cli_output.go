package main

// Output formats of fluxgate scan: an aligned text table, CSV with a header,
// JSON lines and the Arrow IPC stream format.

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/internal/cli"
)

// recordWriter writes record batches in one output format.
type recordWriter interface {
	Write(rec arrow.RecordBatch) error
	// Flush pushes out what is buffered (after each batch of a followed scan).
	Flush() error
	// Close finishes the output (footers, row counts) and flushes it.
	Close() error
}

// outputFormats are the values of scan --format.
var outputFormats = []string{"table", "csv", "jsonl", "arrow"}

// checkOutputFormat reports an unknown output format.
func checkOutputFormat(format string) error {
	switch format {
	case "table", "csv", "jsonl", "json", "ndjson", "arrow", "ipc", "arrows":
		return nil
	}
	return fmt.Errorf("unknown output format %q: want one of %s", format, strings.Join(outputFormats, ", "))
}

// newRecordWriter returns a writer of format to w for records of schema.
func newRecordWriter(format string, w io.Writer, schema *arrow.Schema, mem memory.Allocator) (recordWriter, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	switch format {
	case "table":
		return &textTableWriter{w: bw, schema: schema}, nil
	case "csv":
		return &csvWriter{bw: bw, w: csv.NewWriter(bw, schema, csv.WithHeader(true), csv.WithNullWriter(""))}, nil
	case "jsonl", "json", "ndjson":
		return &jsonlWriter{w: bw}, nil
	case "arrow", "ipc", "arrows":
		return &arrowWriter{bw: bw, w: ipc.NewWriter(bw, ipc.WithSchema(schema), ipc.WithAllocator(mem))}, nil
	}
	return nil, fmt.Errorf("unknown output format %q: want one of %s", format, strings.Join(outputFormats, ", "))
}

// textTableWriter prints rows as an aligned text table. It buffers up to
// textTableBuffer rows (or until the first Flush) to size the columns; later
// rows widen a column only when they must.
type textTableWriter struct {
	w       *bufio.Writer
	schema  *arrow.Schema
	widths  []int
	pending [][]string
	started bool
	rows    int64
}

const textTableBuffer = 1000

func (t *textTableWriter) Write(rec arrow.RecordBatch) error {
	if t.schema == nil {
		t.schema = rec.Schema()
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		row := make([]string, rec.NumCols())
		for j, col := range rec.Columns() {
			row[j] = cli.FormatValue(col, i)
		}
		t.rows++
		if t.started {
			if err := t.writeRow(row); err != nil {
				return err
			}
			continue
		}
		t.pending = append(t.pending, row)
		if len(t.pending) >= textTableBuffer {
			if err := t.start(); err != nil {
				return err
			}
		}
	}
	return nil
}

// start sizes the columns from the header and the buffered rows and prints them.
func (t *textTableWriter) start() error {
	if t.started {
		return nil
	}
	t.started = true
	header := make([]string, t.schema.NumFields())
	for i, f := range t.schema.Fields() {
		header[i] = f.Name
	}
	t.widths = make([]int, len(header))
	for _, row := range append([][]string{header}, t.pending...) {
		for i, v := range row {
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(v))
		}
	}
	if err := t.writeRow(header); err != nil {
		return err
	}
	seps := make([]string, len(header))
	for i, w := range t.widths {
		seps[i] = strings.Repeat("-", w)
	}
	if err := t.writeRow(seps); err != nil {
		return err
	}
	for _, row := range t.pending {
		if err := t.writeRow(row); err != nil {
			return err
		}
	}
	t.pending = nil
	return nil
}

func (t *textTableWriter) writeRow(row []string) error { return cli.WriteRow(t.w, t.widths, row) }

func (t *textTableWriter) Flush() error {
	if t.schema != nil && (t.started || len(t.pending) > 0) {
		if err := t.start(); err != nil {
			return err
		}
	}
	return t.w.Flush()
}

func (t *textTableWriter) Close() error {
	if t.schema != nil {
		if err := t.start(); err != nil {
			return err
		}
	}
	noun := "rows"
	if t.rows == 1 {
		noun = "row"
	}
	fmt.Fprintf(t.w, "(%d %s)\n", t.rows, noun)
	return t.w.Flush()
}

// jsonValue is the JSON of one value: decimals as strings with their scale,
// timestamps as ISO 8601 strings, binary values as base64 strings, the rest
// as arrow marshals them.
func jsonValue(col arrow.Array, i int) any {
	if col.IsNull(i) {
		return nil
	}
	switch a := col.(type) {
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Timestamp:
		return cli.FormatTimestamp(a, i, "T")
	case *array.Binary:
		// Base64, as encoding/json writes []byte; written here because an
		// empty value in a batch with no binary data at all is a nil slice,
		// which json writes as null.
		return base64.StdEncoding.EncodeToString(a.Value(i))
	case *array.LargeBinary:
		return base64.StdEncoding.EncodeToString(a.Value(i))
	}
	return col.GetOneForMarshal(i)
}

// csvWriter writes CSV with a header line; nulls are empty fields.
type csvWriter struct {
	bw *bufio.Writer
	w  *csv.Writer
}

func (c *csvWriter) Write(rec arrow.RecordBatch) error { return c.w.Write(rec) }
func (c *csvWriter) Flush() error {
	if err := c.w.Flush(); err != nil {
		return err
	}
	return c.bw.Flush()
}
func (c *csvWriter) Close() error { return c.Flush() }

// jsonlWriter writes one JSON object per row, keys in column order.
type jsonlWriter struct {
	w *bufio.Writer
}

func (j *jsonlWriter) Write(rec arrow.RecordBatch) error {
	names := make([][]byte, rec.NumCols())
	for i, f := range rec.Schema().Fields() {
		names[i], _ = json.Marshal(f.Name)
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		j.w.WriteByte('{')
		for c, col := range rec.Columns() {
			if c > 0 {
				j.w.WriteByte(',')
			}
			j.w.Write(names[c])
			j.w.WriteByte(':')
			v, err := json.Marshal(jsonValue(col, i))
			if err != nil {
				return fmt.Errorf("column %s: %w", rec.ColumnName(c), err)
			}
			j.w.Write(v)
		}
		if _, err := j.w.WriteString("}\n"); err != nil {
			return err
		}
	}
	return nil
}
func (j *jsonlWriter) Flush() error { return j.w.Flush() }
func (j *jsonlWriter) Close() error { return j.w.Flush() }

// arrowWriter writes the Arrow IPC stream format.
type arrowWriter struct {
	bw *bufio.Writer
	w  *ipc.Writer
}

func (a *arrowWriter) Write(rec arrow.RecordBatch) error { return a.w.Write(rec) }
func (a *arrowWriter) Flush() error                      { return a.bw.Flush() }
func (a *arrowWriter) Close() error {
	if err := a.w.Close(); err != nil {
		return err
	}
	return a.bw.Flush()
}
