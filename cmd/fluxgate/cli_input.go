package main

// Input formats of fluxgate put: CSV with a header line, JSON lines, Parquet
// and Arrow IPC (file or stream format), converted to record batches that
// carry the table's column types.
//
// Which columns are written: --columns if given, else the input's own columns
// (the CSV header, the Parquet or Arrow schema) or, for JSON, the table's
// columns except auto-increment ones. Every such column must be a table column.
//
// Values: CSV and JSON timestamps are ISO-8601 strings or integers in the
// column's unit; TIMESTAMP_LTZ strings carry a zone (Z or +hh:mm), TIMESTAMP
// strings do not. CSV binary values are base64. In CSV, "", NULL and null are
// NULL except in string columns. CSV cells of TIME, ARRAY, MAP and ROW columns
// are read as JSON values (["a","b"], {"k": 1}, "12:30:00"). Parquet and Arrow
// columns are cast to the table's types when they differ (a safe cast: values
// that do not fit are an error).

import (
	"bufio"
	"bytes"
	"context"
	stdcsv "encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/fluxgate-io/fluxgate/internal/arrowcast"
)

// inputFormats are the values of put --format.
var inputFormats = []string{"csv", "jsonl", "parquet", "arrow"}

// detectFormat returns the input format: the flag's, else the one the file
// extension names.
func detectFormat(path, flagFormat string) (string, error) {
	if flagFormat != "" {
		switch f := strings.ToLower(flagFormat); f {
		case "csv", "parquet", "arrow":
			return f, nil
		case "jsonl", "json", "ndjson":
			return "jsonl", nil
		case "ipc", "arrows", "feather":
			return "arrow", nil
		}
		return "", fmt.Errorf("unknown input format %q: want one of %s", flagFormat, strings.Join(inputFormats, ", "))
	}
	if path == "-" {
		return "", errors.New("reading stdin: say which format with --format")
	}
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".csv":
		return "csv", nil
	case ".jsonl", ".ndjson", ".json":
		return "jsonl", nil
	case ".parquet", ".pq":
		return "parquet", nil
	case ".arrow", ".arrows", ".ipc", ".feather":
		return "arrow", nil
	}
	return "", fmt.Errorf("%s: cannot tell the format from the extension %q: use --format (%s)", path, ext, strings.Join(inputFormats, ", "))
}

// inputOptions configure openInput.
type inputOptions struct {
	format    string
	batchRows int
	// columns are the columns to write (--columns); nil means the input's.
	columns []string
	// skip are columns not written unless asked for: auto-increment columns.
	skip     []string
	noHeader bool
	mem      memory.Allocator
	// sqlTypes are the table's column types as it declares them, for errors;
	// a column without one is named by its Arrow type.
	sqlTypes map[string]string
	// name is what errors call the input: its path, or "stdin"; set by openInput.
	name string
}

// inputReader yields the converted records of an input. The current record
// is valid until the next call to Next.
type inputReader struct {
	schema  *arrow.Schema
	next    func() (arrow.RecordBatch, error) // an owned record, or io.EOF
	cur     arrow.RecordBatch
	err     error
	done    bool
	closers []func()
}

func (r *inputReader) Schema() *arrow.Schema          { return r.schema }
func (r *inputReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *inputReader) Err() error                     { return r.err }

func (r *inputReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done {
		return false
	}
	rec, err := r.next()
	if err != nil {
		r.done = true
		if !errors.Is(err, io.EOF) {
			r.err = err
		}
		return false
	}
	r.cur = rec
	return true
}

// Release frees the current record and closes the input.
func (r *inputReader) Release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.done = true
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}

// at names line n of the input in an error: "orders.csv:3".
func (o inputOptions) at(n int) string { return fmt.Sprintf("%s:%d", o.name, n) }

// openInput opens path ("-" is stdin) and returns its records converted to
// the types of table, the table's Arrow schema.
func openInput(ctx context.Context, path string, stdin io.Reader, table *arrow.Schema, opts inputOptions) (*inputReader, error) {
	if opts.mem == nil {
		opts.mem = memory.DefaultAllocator
	}
	if opts.batchRows <= 0 {
		opts.batchRows = 65536
	}
	var (
		r       io.Reader
		closers []func()
	)
	var f *os.File
	opts.name = path
	if path == "-" {
		r = stdin
		opts.name = "stdin"
	} else {
		var err error
		if f, err = os.Open(path); err != nil {
			return nil, err
		}
		r = f
		closers = append(closers, func() { f.Close() })
	}
	var (
		in  *inputReader
		err error
	)
	switch opts.format {
	case "csv":
		in, err = openCSV(r, table, opts)
	case "jsonl":
		in, err = openJSONL(r, table, opts)
	case "parquet":
		in, err = openParquet(ctx, r, f, table, opts)
	case "arrow":
		in, err = openArrow(r, f, table, opts)
	default:
		err = fmt.Errorf("unknown input format %q", opts.format)
	}
	if err != nil {
		for _, c := range closers {
			c()
		}
		if path != "-" {
			err = fmt.Errorf("%s: %w", path, err)
		}
		return nil, err
	}
	in.closers = append(closers, in.closers...)
	if opts.format == "parquet" || opts.format == "arrow" {
		// CSV and JSON errors name the line; these name at least the file.
		next := in.next
		in.next = func() (arrow.RecordBatch, error) {
			rec, err := next()
			if err != nil && !errors.Is(err, io.EOF) {
				err = fmt.Errorf("%s: %w", opts.name, err)
			}
			return rec, err
		}
	}
	return in, nil
}

// targetSchema picks the named columns of table, in the given order, with
// the table's types.
func targetSchema(table *arrow.Schema, names []string) (*arrow.Schema, error) {
	if len(names) == 0 {
		return nil, errors.New("no columns to write")
	}
	seen := map[string]bool{}
	fields := make([]arrow.Field, 0, len(names))
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("column %q appears twice", n)
		}
		seen[n] = true
		idx := table.FieldIndices(n)
		if len(idx) == 0 {
			return nil, fmt.Errorf("column %q is not in the table (columns: %s)", n, strings.Join(fieldNames(table), ", "))
		}
		fields = append(fields, table.Field(idx[0]))
	}
	return arrow.NewSchema(fields, nil), nil
}

// defaultColumns are the table's columns minus those skipped by default.
func defaultColumns(table *arrow.Schema, skip []string) []string {
	var out []string
	for _, n := range fieldNames(table) {
		if !slices.Contains(skip, n) {
			out = append(out, n)
		}
	}
	return out
}

func fieldNames(s *arrow.Schema) []string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return names
}

// --- CSV ---

func openCSV(r io.Reader, table *arrow.Schema, opts inputOptions) (*inputReader, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var names []string
	if opts.noHeader {
		names = opts.columns
		if names == nil {
			names = defaultColumns(table, opts.skip)
		}
	} else {
		line, err := br.ReadString('\n')
		if err != nil && (!errors.Is(err, io.EOF) || line == "") {
			if errors.Is(err, io.EOF) {
				return nil, errors.New("empty CSV: no header line")
			}
			return nil, err
		}
		hdr, err := csvParseLine(strings.TrimPrefix(line, "\ufeff"))
		if err != nil {
			return nil, fmt.Errorf("CSV header: %w", err)
		}
		names = hdr
	}
	// The file's columns with the table's types; types the CSV reader cannot
	// parse, and columns that --columns leaves out, are read as text.
	readFields := make([]arrow.Field, len(names))
	for i, n := range names {
		idx := table.FieldIndices(n)
		switch {
		case len(idx) > 0 && csvReadable(table.Field(idx[0]).Type):
			readFields[i] = table.Field(idx[0])
			readFields[i].Nullable = true
		case len(idx) > 0 || (opts.columns != nil && !slices.Contains(opts.columns, n)):
			readFields[i] = arrow.Field{Name: n, Type: arrow.BinaryTypes.String, Nullable: true}
		default:
			return nil, fmt.Errorf("CSV header: column %q is not in the table (columns: %s)", n, strings.Join(fieldNames(table), ", "))
		}
	}
	readSchema := arrow.NewSchema(readFields, nil)
	target, err := targetSchema(table, names)
	if opts.columns != nil {
		for _, n := range opts.columns {
			if !slices.Contains(names, n) {
				return nil, fmt.Errorf("CSV header: no column %q (header: %s)", n, strings.Join(names, ", "))
			}
		}
		target, err = targetSchema(table, opts.columns)
	}
	if err != nil {
		return nil, fmt.Errorf("CSV header: %w", err)
	}
	// Records are split here, without being parsed, so that their lines are
	// known; each batch of them is decoded by arrow's CSV reader.
	chunks := &csvChunker{br: br, line: 1}
	if !opts.noHeader {
		chunks.line = 2
	}
	in := &inputReader{schema: target}
	in.next = func() (arrow.RecordBatch, error) {
		b, err := chunks.next(opts.batchRows)
		if err != nil {
			return nil, err
		}
		if len(b.starts) == 0 {
			return nil, io.EOF
		}
		rec, err := decodeCSV(b.data, readSchema, target, opts.mem)
		if err == nil {
			return rec, nil
		}
		return nil, locateBadRow(opts, opts.at, b.lines, err, func(i int) []badCell {
			row, err := csvRecord(b.row(i), names)
			if err != nil {
				return nil
			}
			cells := make([]badCell, 0, len(names))
			for j, n := range names {
				idx := target.FieldIndices(n)
				if len(idx) == 0 {
					continue // read as text, not written
				}
				field := target.Field(idx[0])
				one := arrow.NewSchema([]arrow.Field{readFields[j]}, nil)
				cells = append(cells, badCell{field: field, value: fmt.Sprintf("%q", row[j]), check: func() error {
					return decodeCheck(decodeCSV(csvCell(row[j]), one, arrow.NewSchema([]arrow.Field{field}, nil), opts.mem))
				}})
			}
			return cells
		}, func(i int) error {
			if _, err := csvRecord(b.row(i), names); err != nil {
				return err
			}
			return decodeCheck(decodeCSV(b.row(i), readSchema, target, opts.mem))
		})
	}
	return in, nil
}

// csvChunker cuts CSV input into runs of whole records, and knows the line
// each record starts on. It does not parse them: a newline inside quotes
// continues a record, and a line of nothing but a line ending is skipped,
// as encoding/csv skips it.
type csvChunker struct {
	br   *bufio.Reader
	line int // the line the next record starts on
}

// next returns up to n records.
func (c *csvChunker) next(n int) (inputRows, error) {
	var b inputRows
	inQuotes := false
	for len(b.starts) < n || inQuotes {
		line, err := readLine(c.br)
		if err != nil {
			return b, err
		}
		if line == nil {
			break
		}
		if !inQuotes && len(bytes.TrimRight(line, "\r\n")) == 0 {
			c.line++
			continue
		}
		if !inQuotes {
			b.starts, b.lines = append(b.starts, len(b.data)), append(b.lines, c.line)
		}
		b.data = append(b.data, line...)
		c.line++
		// A quote escaped by doubling toggles twice.
		if bytes.Count(line, []byte{'"'})%2 == 1 {
			inQuotes = !inQuotes
		}
	}
	return b, nil
}

// inputRows are a batch of rows as the input writes them: their bytes, where
// each row starts in them, and its line.
type inputRows struct {
	data          []byte
	starts, lines []int
}

// row returns the bytes of row i.
func (b *inputRows) row(i int) []byte {
	if i+1 < len(b.starts) {
		return b.data[b.starts[i]:b.starts[i+1]]
	}
	return b.data[b.starts[i]:]
}

// readLine returns the next line of br with its line ending, valid until the
// next read; nil at the end.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// Longer than the buffer: take it whole.
		var rest []byte
		rest, err = br.ReadBytes('\n')
		line = append(slices.Clone(line), rest...)
	}
	if errors.Is(err, io.EOF) {
		if len(line) == 0 {
			return nil, nil
		}
		err = nil
	}
	return line, err
}

// csvRecord parses one record, which has a field for each name.
func csvRecord(record []byte, names []string) ([]string, error) {
	r := stdcsv.NewReader(bytes.NewReader(record))
	r.FieldsPerRecord = len(names)
	row, err := r.Read()
	var pe *stdcsv.ParseError
	switch {
	case errors.Is(err, stdcsv.ErrFieldCount):
		return nil, fmt.Errorf("%s, want %d (%s)", plural(int64(len(row)), "field"), len(names), strings.Join(names, ","))
	case errors.As(err, &pe):
		return nil, pe.Err
	}
	return row, err
}

// csvCell is one value as a CSV record.
func csvCell(v string) []byte {
	if v == "" {
		return []byte("\"\"\n") // encoding/csv would write an empty line, which readers skip
	}
	var buf bytes.Buffer
	w := stdcsv.NewWriter(&buf)
	w.Write([]string{v})
	w.Flush()
	return buf.Bytes()
}

// decodeCSV decodes CSV records of the columns read with arrow's CSV reader
// and conforms them to target.
func decodeCSV(data []byte, read, target *arrow.Schema, mem memory.Allocator) (_ arrow.RecordBatch, err error) {
	cr := csv.NewReader(bytes.NewReader(data), read,
		csv.WithHeader(false),
		csv.WithChunk(-1),
		csv.WithNullReader(false),
		csv.WithAllocator(mem))
	defer cr.Release()
	defer func() {
		// arrow's CSV reader panics on some malformed rows.
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	if !cr.Next() {
		if err := cr.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("no rows decoded")
	}
	if err := cr.Err(); err != nil {
		return nil, err
	}
	return conform(cr.RecordBatch(), target, mem)
}

// csvParseLine splits one CSV line (the header).
func csvParseLine(line string) ([]string, error) {
	rec, err := stdcsv.NewReader(strings.NewReader(line)).Read()
	if err != nil {
		return nil, err
	}
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	return rec, nil
}

// csvReadable reports whether arrow's CSV reader parses dt directly.
func csvReadable(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING,
		arrow.BINARY, arrow.LARGE_BINARY, arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64,
		arrow.DECIMAL128, arrow.DECIMAL256:
		return true
	}
	return false
}

// --- JSON lines ---

func openJSONL(r io.Reader, table *arrow.Schema, opts inputOptions) (*inputReader, error) {
	names := opts.columns
	if names == nil {
		names = defaultColumns(table, opts.skip)
	}
	target, err := targetSchema(table, names)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(r, 1<<20)
	// A JSON array of objects is accepted too; its errors name the element.
	at := opts.at
	if first, err := peekNonSpace(br); err == nil && first == '[' {
		var rows []json.RawMessage
		if err := json.NewDecoder(br).Decode(&rows); err != nil {
			return nil, fmt.Errorf("JSON array: %w", err)
		}
		var buf bytes.Buffer
		for _, row := range rows {
			buf.Write(bytes.ReplaceAll(row, []byte("\n"), []byte(" ")))
			buf.WriteByte('\n')
		}
		br = bufio.NewReader(&buf)
		at = func(n int) string { return fmt.Sprintf("%s: element %d", opts.name, n) }
	}
	lineNo, first := 0, true
	in := &inputReader{schema: target}
	in.next = func() (arrow.RecordBatch, error) {
		var b inputRows // objects, one a line
		for len(b.starts) < opts.batchRows {
			line, err := readLine(br)
			if err != nil {
				return nil, err
			}
			if line == nil {
				break
			}
			lineNo++
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			if err := checkJSONLine(line, table, first); err != nil {
				return nil, fmt.Errorf("%s: %w", at(lineNo), err)
			}
			first = false
			b.starts, b.lines = append(b.starts, len(b.data)), append(b.lines, lineNo)
			b.data = append(append(b.data, line...), '\n')
		}
		if len(b.starts) == 0 {
			return nil, io.EOF
		}
		rec, err := decodeJSON(b.data, target, opts.mem)
		if err == nil {
			return rec, nil
		}
		return nil, locateBadRow(opts, at, b.lines, err, func(i int) []badCell {
			var obj map[string]json.RawMessage
			if json.Unmarshal(b.row(i), &obj) != nil {
				return nil
			}
			var cells []badCell
			for _, f := range target.Fields() {
				raw, ok := obj[f.Name]
				if !ok {
					continue
				}
				one := arrow.NewSchema([]arrow.Field{f}, nil)
				cell, _ := json.Marshal(map[string]json.RawMessage{f.Name: raw})
				cells = append(cells, badCell{field: f, value: string(raw), check: func() error {
					return decodeCheck(decodeJSON(cell, one, opts.mem))
				}})
			}
			return cells
		}, func(i int) error {
			return decodeCheck(decodeJSON(b.row(i), target, opts.mem))
		})
	}
	return in, nil
}

func peekNonSpace(br *bufio.Reader) (byte, error) {
	for n := 1; ; n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			return 0, err
		}
		if c := b[n-1]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, nil
		}
		if n >= br.Size() {
			return 0, bufio.ErrBufferFull
		}
	}
}

// checkJSONLine checks that a line is one JSON object, which arrow's reader
// does not (it takes a truncated one), and that the keys of the first are
// table columns, since the reader drops other keys silently.
func checkJSONLine(line []byte, table *arrow.Schema, first bool) error {
	if line[0] != '{' {
		return fmt.Errorf("want a JSON object, found %.20s", line)
	}
	if !first && json.Valid(line) {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	var unknown []string
	for k := range obj {
		if len(table.FieldIndices(k)) == 0 {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("keys %q are not table columns (columns: %s)", unknown, strings.Join(fieldNames(table), ", "))
	}
	return nil
}

// decodeJSON decodes JSON objects, one a line, with arrow's JSON reader and
// conforms them to target.
func decodeJSON(data []byte, target *arrow.Schema, mem memory.Allocator) (arrow.RecordBatch, error) {
	jr := array.NewJSONReader(bytes.NewReader(data), target, array.WithChunk(-1), array.WithAllocator(mem))
	defer jr.Release()
	if !jr.Next() {
		if err := jr.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("no rows decoded")
	}
	if err := jr.Err(); err != nil {
		return nil, err
	}
	return conform(jr.RecordBatch(), target, mem)
}

// --- Parquet ---

func openParquet(ctx context.Context, r io.Reader, f *os.File, table *arrow.Schema, opts inputOptions) (*inputReader, error) {
	var ra parquet.ReaderAtSeeker
	if f != nil {
		ra = f
	} else {
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		ra = bytes.NewReader(data)
	}
	pf, err := file.NewParquetReader(ra)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(opts.batchRows)}, opts.mem)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("parquet: %w", err)
	}
	fileSchema, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("parquet: %w", err)
	}
	target, err := inputTarget(fileSchema, table, opts)
	if err != nil {
		pf.Close()
		return nil, err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("parquet: %w", err)
	}
	in := &inputReader{schema: target, closers: []func(){func() { pf.Close() }, rr.Release}}
	in.next = func() (arrow.RecordBatch, error) {
		if !rr.Next() {
			if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("parquet: %w", err)
			}
			return nil, io.EOF
		}
		return conform(rr.RecordBatch(), target, opts.mem)
	}
	return in, nil
}

// inputTarget is the schema written for an input with its own schema: the
// --columns, or every input column, with the table's types.
func inputTarget(fileSchema, table *arrow.Schema, opts inputOptions) (*arrow.Schema, error) {
	names := opts.columns
	if names == nil {
		names = fieldNames(fileSchema)
	}
	for _, n := range names {
		if len(fileSchema.FieldIndices(n)) == 0 {
			return nil, fmt.Errorf("the input has no column %q (columns: %s)", n, strings.Join(fieldNames(fileSchema), ", "))
		}
	}
	return targetSchema(table, names)
}

// --- Arrow IPC ---

func openArrow(r io.Reader, f *os.File, table *arrow.Schema, opts inputOptions) (*inputReader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, _ := br.Peek(6)
	if string(magic) == "ARROW1" {
		var ra ipc.ReadAtSeeker
		if f != nil {
			ra = f
		} else {
			data, err := io.ReadAll(br)
			if err != nil {
				return nil, err
			}
			ra = bytes.NewReader(data)
		}
		fr, err := ipc.NewFileReader(ra, ipc.WithAllocator(opts.mem))
		if err != nil {
			return nil, fmt.Errorf("arrow file: %w", err)
		}
		target, err := inputTarget(fr.Schema(), table, opts)
		if err != nil {
			fr.Close()
			return nil, err
		}
		i := 0
		in := &inputReader{schema: target, closers: []func(){func() { fr.Close() }}}
		in.next = func() (arrow.RecordBatch, error) {
			if i >= fr.NumRecords() {
				return nil, io.EOF
			}
			rec, err := fr.RecordBatchAt(i)
			if err != nil {
				return nil, fmt.Errorf("arrow file: %w", err)
			}
			defer rec.Release()
			i++
			return conform(rec, target, opts.mem)
		}
		return in, nil
	}
	sr, err := ipc.NewReader(br, ipc.WithAllocator(opts.mem))
	if err != nil {
		return nil, fmt.Errorf("arrow stream: %w", err)
	}
	target, err := inputTarget(sr.Schema(), table, opts)
	if err != nil {
		sr.Release()
		return nil, err
	}
	in := &inputReader{schema: target, closers: []func(){sr.Release}}
	in.next = func() (arrow.RecordBatch, error) {
		if !sr.Next() {
			if err := sr.Err(); err != nil {
				return nil, fmt.Errorf("arrow stream: %w", err)
			}
			return nil, io.EOF
		}
		return conform(sr.RecordBatch(), target, opts.mem)
	}
	return in, nil
}

// --- conversion ---

// conform returns a new record with target's columns, taken by name from rec
// and converted to target's types where they differ.
func conform(rec arrow.RecordBatch, target *arrow.Schema, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, 0, target.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, f := range target.Fields() {
		idx := rec.Schema().FieldIndices(f.Name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("the input has no column %q", f.Name)
		}
		col, err := convertColumn(rec.Column(idx[0]), f.Type, mem)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		cols = append(cols, col)
	}
	return array.NewRecordBatch(target, cols, rec.NumRows()), nil
}

// convertColumn returns col as type dt (retained if it is already).
func convertColumn(col arrow.Array, dt arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	if arrow.TypeEqual(col.DataType(), dt) {
		col.Retain()
		return col, nil
	}
	if s, ok := col.(*array.String); ok && !csvReadable(dt) {
		return fromJSONText(s, dt, mem)
	}
	out, err := arrowcast.Cast(context.Background(), mem, col, dt)
	if err != nil {
		return nil, fmt.Errorf("cannot convert %s to %s: %w", col.DataType(), dt, err)
	}
	return out, nil
}

// fromJSONText converts text cells to dt by reading each as a JSON value;
// a cell that is not JSON is taken as a JSON string, an empty cell as NULL.
// A JSON object in a MAP<STRING, ...> column becomes its key/value entries.
func fromJSONText(s *array.String, dt arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i := 0; i < s.Len(); i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		v := strings.TrimSpace(s.Value(i))
		switch {
		case s.IsNull(i) || v == "" || v == "NULL" || v == "null":
			buf.WriteString("null")
		case json.Valid([]byte(v)):
			if m, ok := dt.(*arrow.MapType); ok && strings.HasPrefix(v, "{") {
				entries, err := objectToEntries(v, m)
				if err != nil {
					return nil, fmt.Errorf("row %d: %w", i, err)
				}
				buf.Write(entries)
				continue
			}
			buf.WriteString(v)
		default:
			q, _ := json.Marshal(v)
			buf.Write(q)
		}
	}
	buf.WriteByte(']')
	arr, _, err := array.FromJSON(mem, dt, &buf)
	if err != nil {
		return nil, fmt.Errorf("cannot read text as %s: %w", dt, err)
	}
	return arr, nil
}

// objectToEntries turns {"k": v, ...} into arrow's map JSON form
// [{"key": "k", "value": v}, ...], keys sorted.
func objectToEntries(v string, m *arrow.MapType) ([]byte, error) {
	if m.KeyType().ID() != arrow.STRING && m.KeyType().ID() != arrow.LARGE_STRING {
		return nil, fmt.Errorf("a JSON object needs string map keys, not %s; write [{\"key\": k, \"value\": v}, ...]", m.KeyType())
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &obj); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type entry struct {
		Key   string          `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	entries := make([]entry, len(keys))
	for i, k := range keys {
		entries[i] = entry{k, obj[k]}
	}
	return json.Marshal(entries)
}
