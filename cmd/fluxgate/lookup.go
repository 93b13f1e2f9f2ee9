package main

// fluxgate lookup: look keys up in a primary-key table (PROTOCOL.md §6):
// point lookups by the primary key, prefix lookups by the bucket key, and
// insert-if-not-exists on dictionary tables.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/peterbourgon/ff/v4"
)

const lookupUsage = "lookup --table T (--key col=value [--key col=value ...] | --keys FILE.jsonl|-) [--prefix] [--insert-if-not-exists] [--columns a,b] [--format table|csv|jsonl|arrow]"

// lookupFlags are the flags of lookup.
type lookupFlags struct {
	table     string
	keys      multiFlag
	keysFile  string
	prefix    bool
	insert    bool
	columns   string
	format    string
	batchRows int
}

func lookupCommand(std stdio) *ff.Command {
	var f lookupFlags
	var conn connFlags
	fs := cli.NewFlagSet("lookup")
	conn.register(fs.FlagSet)
	fs.StringVar(&f.table, "table", "", "the table to look up, database.table")
	fs.Var(&f.keys, "key", "one key column's value, col=value (repeat for each key column); values are parsed by the column's type")
	fs.StringVar(&f.keysFile, "keys", "", "look up many keys: a JSON lines file (- for stdin) with one object of key columns per line")
	fs.BoolVar(&f.prefix, "prefix", false, "prefix lookup: the keys are the bucket-key columns, and every row with that prefix is printed")
	fs.BoolVar(&f.insert, "insert-if-not-exists", false, "insert absent keys (with NULLs and a new auto-increment id) and print them too")
	fs.StringVar(&f.columns, "columns", "", "columns to print, comma-separated (default all)")
	fs.StringVar(&f.format, "format", "table", "output format: table, csv, jsonl or arrow (Arrow IPC stream)")
	fs.IntVar(&f.batchRows, "batch-rows", 4096, "keys per lookup batch with --keys")
	return &ff.Command{Name: "lookup", Usage: "fluxgate " + lookupUsage, ShortHelp: "look keys up in a primary-key table (point, prefix, insert-if-not-exists)", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			if len(pos) == 1 && f.table == "" {
				f.table = pos[0]
			} else if len(pos) > 0 {
				return cli.UsageError(fmt.Errorf("unexpected arguments %q", pos))
			}
			if f.table == "" {
				return cli.UsageError(errors.New("--table is required"))
			}
			if (len(f.keys) == 0) == (f.keysFile == "") {
				return cli.UsageError(errors.New("give the key with --key col=value, or many keys with --keys FILE"))
			}
			if err := checkOutputFormat(f.format); err != nil {
				return err
			}
			single, err := parseKeyFlags(f.keys)
			if err != nil {
				return err
			}

			c, info, tableSchema, err := conn.dialTable(ctx, f.table)
			if err != nil {
				return err
			}
			defer c.Close()
			keyCols := lookupKeyColumns(info, f.prefix)
			var in *inputReader
			if f.keysFile == "" {
				line, cols, err := keyJSON(single, keyCols, tableSchema)
				if err != nil {
					return fmt.Errorf("table %s: %w", f.table, err)
				}
				in, err = openInput(ctx, "-", bytes.NewReader(line), tableSchema, inputOptions{format: "jsonl", columns: cols, mem: c.Allocator()})
				if err != nil {
					return fmt.Errorf("--key: %w", err)
				}
			} else {
				if in, err = openInput(ctx, f.keysFile, std.in, tableSchema, inputOptions{
					format: "jsonl", batchRows: f.batchRows, columns: keyCols, mem: c.Allocator(), sqlTypes: sqlTypes(info),
				}); err != nil {
					return err
				}
			}
			defer in.Release()

			req := client.LookupRequest{Table: f.table, Columns: splitList(f.columns), Prefix: f.prefix, InsertIfNotExists: f.insert}
			return lookupAll(ctx, c, req, in, std.out, f.format, f.keysFile != "", c.Allocator())

		}}
}

// parseKeyFlags splits the --key col=value flags.
func parseKeyFlags(flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range flags {
		col, val, ok := strings.Cut(kv, "=")
		col = strings.TrimSpace(col)
		if !ok || col == "" {
			return nil, fmt.Errorf("--key %q: want col=value", kv)
		}
		if _, dup := out[col]; dup {
			return nil, fmt.Errorf("--key: column %q given twice", col)
		}
		out[col] = val
	}
	return out, nil
}

// lookupKeyColumns are the columns of a key batch (PROTOCOL.md §6.1): the
// primary key for a point lookup; for a prefix lookup the prefix index's
// columns, else the bucket key and partition keys (the server then says why
// the table has no prefix index). Nil for a table without a primary key.
func lookupKeyColumns(info *client.TableInfo, prefix bool) []string {
	if !prefix {
		return slices.Clone(info.PrimaryKey)
	}
	for _, idx := range info.Indexes {
		if idx.Name == "prefix" {
			return slices.Clone(idx.Columns)
		}
	}
	cols := splitList(info.Options["bucket.key"])
	if len(cols) == 0 {
		return slices.Clone(info.PrimaryKey)
	}
	for _, p := range info.PartitionKeys {
		if !slices.Contains(cols, p) {
			cols = append(cols, p)
		}
	}
	return cols
}

// keyJSON turns the values of one key, as typed on the command line, into a
// JSON object line for the JSON key reader, values parsed by the columns'
// types. It returns the key batch's columns: keyCols when known (and then
// the key must name exactly those), else the columns given, in table order.
func keyJSON(values map[string]string, keyCols []string, table *arrow.Schema) ([]byte, []string, error) {
	var given []string
	for _, f := range table.Fields() {
		if _, ok := values[f.Name]; ok {
			given = append(given, f.Name)
		}
	}
	for col := range values {
		if len(table.FieldIndices(col)) == 0 {
			return nil, nil, fmt.Errorf("--key %s: no such column (columns: %s)", col, strings.Join(fieldNames(table), ", "))
		}
	}
	cols := given
	if len(keyCols) > 0 {
		var missing, extra []string
		for _, k := range keyCols {
			if _, ok := values[k]; !ok {
				missing = append(missing, k)
			}
		}
		for _, g := range given {
			if !slices.Contains(keyCols, g) {
				extra = append(extra, g)
			}
		}
		if len(missing) > 0 || len(extra) > 0 {
			return nil, nil, fmt.Errorf("the key columns are %s; give each once with --key col=value (missing: %v, not key columns: %v)", strings.Join(keyCols, ", "), missing, extra)
		}
		cols = keyCols
	}
	obj := make(map[string]json.RawMessage, len(cols))
	for _, col := range cols {
		f := table.Field(table.FieldIndices(col)[0])
		v, err := keyValueJSON(values[col], f.Type)
		if err != nil {
			return nil, nil, fmt.Errorf("--key %s=%s: %w", col, values[col], err)
		}
		obj[col] = v
	}
	line, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, err
	}
	return append(line, '\n'), cols, nil
}

// keyValueJSON renders a command-line value as the JSON the key reader takes
// for dt: numbers and booleans checked and unquoted, integers of a
// timestamp unquoted (the column's unit), everything else a JSON string
// (decimals, dates, ISO-8601 timestamps and times as text, binary as
// base64).
func keyValueJSON(s string, dt arrow.DataType) (json.RawMessage, error) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		bits := map[arrow.Type]int{arrow.INT8: 8, arrow.INT16: 16, arrow.INT32: 32, arrow.INT64: 64}[dt.ID()]
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, bits)
		if err != nil {
			return nil, fmt.Errorf("not a %s: %w", dt, errors.Unwrap(err))
		}
		return json.RawMessage(strconv.FormatInt(n, 10)), nil
	case arrow.FLOAT32, arrow.FLOAT64:
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Errorf("not a %s: %w", dt, errors.Unwrap(err))
		}
		b, err := json.Marshal(x)
		if err != nil {
			return nil, fmt.Errorf("%s cannot be a key value", s)
		}
		return b, nil
	case arrow.BOOL:
		x, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("not a boolean (true or false)")
		}
		return json.RawMessage(strconv.FormatBool(x)), nil
	case arrow.TIMESTAMP:
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return json.RawMessage(strconv.FormatInt(n, 10)), nil
		}
	case arrow.LIST, arrow.MAP, arrow.STRUCT:
		return nil, fmt.Errorf("a %s column cannot be a key", dt)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// lookupAll sends every key batch of in through one lookup stream and prints
// the answers in order. With renumber (many keys from a file), _key_index is
// the key's line in the input (from 0); for a single key it is left out.
func lookupAll(ctx context.Context, c *client.Client, req client.LookupRequest, in *inputReader, out io.Writer, format string, renumber bool, mem memory.Allocator) error {
	l, err := c.Lookup(ctx, req)
	if err != nil {
		return err
	}
	var (
		mu       sync.Mutex
		starts   []int64 // the first key number of each batch sent
		printErr error
		rw       recordWriter
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			ans, _, err := l.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					mu.Lock()
					printErr = err
					mu.Unlock()
				}
				return
			}
			mu.Lock()
			start := starts[i]
			mu.Unlock()
			rec, err := shapeAnswer(ans, start, renumber, mem)
			ans.Release()
			if err == nil && rw == nil {
				rw, err = newRecordWriter(format, out, rec.Schema(), mem)
			}
			if err == nil {
				err = rw.Write(rec)
			}
			if rec != nil {
				rec.Release()
			}
			if err != nil {
				mu.Lock()
				printErr = err // the sender stops at its next batch
				mu.Unlock()
				return
			}
		}
	}()
	var sendErr error
	var sent int64
	for in.Next() {
		mu.Lock()
		failed := printErr != nil
		starts = append(starts, sent)
		mu.Unlock()
		if failed {
			break
		}
		rec := in.RecordBatch()
		if sendErr = l.Send(rec); sendErr != nil {
			break
		}
		sent += rec.NumRows()
	}
	inErr := in.Err()
	if err := l.CloseSend(); err != nil && sendErr == nil {
		sendErr = err
	}
	<-done
	closeErr := l.Close()
	var outErr error
	if rw != nil {
		outErr = rw.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case printErr != nil:
		return printErr
	case sendErr != nil:
		return sendErr
	case inErr != nil:
		return inErr
	case closeErr != nil:
		return closeErr
	}
	return outErr
}

// shapeAnswer returns the answer as printed: without _key_index for a single
// key, or with _key_index renumbered to count from start (as BIGINT) for
// many.
func shapeAnswer(ans arrow.RecordBatch, start int64, renumber bool, mem memory.Allocator) (arrow.RecordBatch, error) {
	idx := ans.Schema().FieldIndices(client.KeyIndexColumn)
	if len(idx) != 1 {
		return nil, fmt.Errorf("the lookup answer has no %s column (schema %s)", client.KeyIndexColumn, ans.Schema())
	}
	fields := slices.Clone(ans.Schema().Fields())
	cols := slices.Clone(ans.Columns())
	if !renumber {
		fields = slices.Delete(fields, idx[0], idx[0]+1)
		cols = slices.Delete(cols, idx[0], idx[0]+1)
		return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, ans.NumRows()), nil
	}
	ki, ok := ans.Column(idx[0]).(*array.Int32)
	if !ok {
		return nil, fmt.Errorf("the lookup answer's %s column is %s, want int32", client.KeyIndexColumn, ans.Column(idx[0]).DataType())
	}
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Reserve(ki.Len())
	for i := range ki.Len() {
		b.Append(start + int64(ki.Value(i)))
	}
	renumbered := b.NewArray()
	defer renumbered.Release()
	fields[idx[0]] = arrow.Field{Name: client.KeyIndexColumn, Type: arrow.PrimitiveTypes.Int64}
	cols[idx[0]] = renumbered
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, ans.NumRows()), nil
}
