package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/fluxgate-io/fluxgate/client"
)

// testTable is a table with one column of most types.
func testTable(t *testing.T) *arrow.Schema {
	t.Helper()
	spec := testSpec()
	sc, err := spec.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func testSpec() client.TableSpec {
	return client.TableSpec{Table: "fluss.t", PrimaryKey: []string{"id"}, Columns: []client.Column{
		{Name: "id", Type: "BIGINT"},
		{Name: "name", Type: "STRING"},
		{Name: "amount", Type: "DECIMAL(10,2)"},
		{Name: "ts", Type: "TIMESTAMP(3)"},
		{Name: "ltz", Type: "TIMESTAMP_LTZ(3)"},
		{Name: "d", Type: "DATE"},
		{Name: "tm", Type: "TIME(3)"},
		{Name: "ok", Type: "BOOLEAN"},
		{Name: "tags", Type: "ARRAY<STRING>"},
		{Name: "attrs", Type: "MAP<STRING, INT>"},
	}}
}

// wantRows is what every input in these tests holds, as the text table prints it.
const wantRows = `id  name   amount  ts                       ltz                       d           tm            ok     tags       attrs
--  -----  ------  -----------------------  ------------------------  ----------  ------------  -----  ---------  -----------------------
1   alice  12.50   2026-11-30 12:00:00.123  2026-11-30 12:00:00.123Z  2026-11-30  12:30:00.000  true   ["a","b"]  [{"key":"k","value":1}]
2   bob    NULL    NULL                     NULL                      NULL        NULL          false  NULL       NULL
3          0.01    1970-01-01 00:00:01      1970-01-01 00:00:01Z      2000-01-01  00:00:01.000  NULL   []         []
(3 rows)
`

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAllInput opens an input and renders all its records as a text table.
func readAllInput(t *testing.T, path string, stdin []byte, opts inputOptions) (string, *arrow.Schema) {
	t.Helper()
	in, err := openInput(context.Background(), path, bytes.NewReader(stdin), testTable(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	var out bytes.Buffer
	w, err := newRecordWriter("table", &out, in.Schema(), opts.mem)
	if err != nil {
		t.Fatal(err)
	}
	for in.Next() {
		rec := in.RecordBatch()
		if !rec.Schema().Equal(in.Schema()) {
			t.Errorf("record schema %s, reader schema %s", rec.Schema(), in.Schema())
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String(), in.Schema()
}

func TestDetectFormat(t *testing.T) {
	for _, tc := range []struct{ path, flag, want string }{
		{"a.csv", "", "csv"},
		{"a.JSONL", "", "jsonl"},
		{"a.ndjson", "", "jsonl"},
		{"a.json", "", "jsonl"},
		{"a.parquet", "", "parquet"},
		{"a.arrow", "", "arrow"},
		{"a.arrows", "", "arrow"},
		{"a.ipc", "", "arrow"},
		{"a.txt", "csv", "csv"},
		{"-", "json", "jsonl"},
	} {
		got, err := detectFormat(tc.path, tc.flag)
		if err != nil || got != tc.want {
			t.Errorf("detectFormat(%q, %q) = %q, %v; want %q", tc.path, tc.flag, got, err, tc.want)
		}
	}
	for _, bad := range [][2]string{{"a.txt", ""}, {"-", ""}, {"a.csv", "xml"}} {
		if _, err := detectFormat(bad[0], bad[1]); err == nil {
			t.Errorf("detectFormat(%q, %q) succeeded", bad[0], bad[1])
		}
	}
}

func TestCSVInput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	csvText := "id,name,amount,ts,ltz,d,tm,ok,tags,attrs\n" +
		`1,alice,12.50,2026-11-30T12:00:00.123,2026-11-30T12:00:00.123Z,2026-11-30,12:30:00,true,"[""a"",""b""]","{""k"": 1}"` + "\n" +
		"2,bob,,,NULL,,,false,,\n" +
		`3,,0.01,1000,1000,2000-01-01,1000,,[],{}` + "\n"
	for _, batchRows := range []int{1, 2, 1000} {
		got, sc := readAllInput(t, writeTemp(t, "in.csv", csvText), nil, inputOptions{format: "csv", batchRows: batchRows, mem: mem})
		if got != wantRows {
			t.Errorf("batch rows %d:\n%s\nwant:\n%s", batchRows, got, wantRows)
		}
		if !sc.Equal(testTable(t)) {
			t.Errorf("schema = %s", sc)
		}
	}

	// Columns in another order, a subset, from stdin.
	got, sc := readAllInput(t, "-", []byte("name,id\nx,7\n"), inputOptions{format: "csv", mem: mem})
	if fieldsOf(sc) != "name,id" || !strings.Contains(got, "x     7") {
		t.Errorf("reordered: %s\n%s", sc, got)
	}
	// --columns picks from a wider header, which may have other columns.
	_, sc = readAllInput(t, "-", []byte("id,name,junk\n7,x,y\n"), inputOptions{format: "csv", columns: []string{"id", "name"}, mem: mem})
	if fieldsOf(sc) != "id,name" {
		t.Errorf("--columns: %s", sc)
	}
	// No header: --columns name the columns.
	got, _ = readAllInput(t, "-", []byte("7,x\n8,y\n"), inputOptions{format: "csv", noHeader: true, columns: []string{"id", "name"}, mem: mem})
	if !strings.Contains(got, "(2 rows)") {
		t.Errorf("no header:\n%s", got)
	}

	for name, tc := range map[string]struct {
		in   string
		opts inputOptions
		want string
	}{
		"unknown column":   {"id,nope\n1,2\n", inputOptions{}, `column "nope" is not in the table`},
		"bad number":       {"id\nx\n", inputOptions{}, `stdin:2: column id: "x" is not an int64`},
		"LTZ without zone": {"id,ltz\n1,2026-11-30T12:00:00\n", inputOptions{}, "zone"},
		"bad time":         {"id,tm\n1,noon\n", inputOptions{}, "column tm"},
		"missing --column": {"id\n1\n", inputOptions{columns: []string{"id", "name"}}, `no column "name"`},
		"empty":            {"", inputOptions{}, "no header"},
		"ragged":           {"id,name\n1\n", inputOptions{}, "stdin:2: 1 field, want 2 (id,name)"},
	} {
		tc.opts.format, tc.opts.mem = "csv", mem
		in, err := openInput(context.Background(), "-", strings.NewReader(tc.in), testTable(t), tc.opts)
		if err == nil {
			for in.Next() {
			}
			err = in.Err()
			in.Release()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
}

func fieldsOf(sc *arrow.Schema) string { return strings.Join(fieldNames(sc), ",") }

func TestJSONInput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	jsonl := `{"id": 1, "name": "alice", "amount": "12.50", "ts": "2026-11-30T12:00:00.123", "ltz": "2026-11-30T12:00:00.123Z", "d": "2026-11-30", "tm": "12:30:00", "ok": true, "tags": ["a", "b"], "attrs": [{"key": "k", "value": 1}]}
{"id": 2, "name": "bob", "ok": false}

{"id": 3, "name": "", "amount": "0.01", "ts": 1000, "ltz": 1000, "d": "2000-01-01", "tm": 1000, "tags": [], "attrs": []}
`
	for _, batchRows := range []int{1, 1000} {
		got, sc := readAllInput(t, writeTemp(t, "in.jsonl", jsonl), nil, inputOptions{format: "jsonl", batchRows: batchRows, mem: mem})
		if got != wantRows {
			t.Errorf("batch rows %d:\n%s\nwant:\n%s", batchRows, got, wantRows)
		}
		if !sc.Equal(testTable(t)) {
			t.Errorf("schema = %s", sc)
		}
	}
	// A JSON array of objects.
	got, _ := readAllInput(t, "-", []byte(` [{"id": 1}, {"id": 2}]`), inputOptions{format: "jsonl", columns: []string{"id"}, mem: mem})
	if !strings.Contains(got, "(2 rows)") {
		t.Errorf("array:\n%s", got)
	}
	// Auto-increment columns are left out by default.
	_, sc := readAllInput(t, "-", []byte(`{"id": 1}`), inputOptions{format: "jsonl", skip: []string{"amount"}, mem: mem})
	if strings.Contains(fieldsOf(sc), "amount") {
		t.Errorf("skipped column written: %s", sc)
	}
	for name, in := range map[string]string{
		"unknown key": `{"id": 1, "nope": 2}`,
		"bad value":   `{"id": "x"}`,
	} {
		r, err := openInput(context.Background(), "-", strings.NewReader(in), testTable(t), inputOptions{format: "jsonl", mem: mem})
		if err == nil {
			for r.Next() {
			}
			err = r.Err()
			r.Release()
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// sourceRecord is the test rows as a record with other (castable) types than
// the table's and an extra column: what a Parquet or Arrow file might hold.
func sourceRecord(t *testing.T, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "name", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "ltz", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "tm", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "attrs", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(mem, sc, strings.NewReader(`[
		{"id": 1, "name": "alice", "amount": "12.50", "ts": "2026-11-30T12:00:00.123", "ltz": "2026-11-30T12:00:00.123Z", "d": "2026-11-30", "tm": "12:30:00", "ok": true, "tags": ["a", "b"], "attrs": [{"key": "k", "value": 1}]},
		{"id": 2, "name": "bob", "ok": false},
		{"id": 3, "name": "", "amount": "0.01", "ts": 1000000, "ltz": 1000, "d": "2000-01-01", "tm": 1000, "tags": [], "attrs": []}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestParquetInput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := sourceRecord(t, mem)
	defer rec.Release()

	path := filepath.Join(t.TempDir(), "in.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithAllocator(mem)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(mem)))
	if err != nil {
		t.Fatal(err)
	}
	if err := pw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct{ path string }{{path}, {"-"}} {
		got, sc := readAllInput(t, tc.path, data, inputOptions{format: "parquet", batchRows: 2, mem: mem})
		if got != wantRows {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.path, got, wantRows)
		}
		if !sc.Equal(testTable(t)) {
			t.Errorf("schema = %s", sc)
		}
	}
	got, sc := readAllInput(t, path, nil, inputOptions{format: "parquet", columns: []string{"name", "id"}, mem: mem})
	if fieldsOf(sc) != "name,id" || !strings.Contains(got, "(3 rows)") {
		t.Errorf("--columns: %s\n%s", sc, got)
	}
}

func TestArrowInput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := sourceRecord(t, mem)
	defer rec.Release()

	var stream, file bytes.Buffer
	sw := ipc.NewWriter(&stream, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem))
	fw, err := ipc.NewFileWriter(&file, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []interface {
		Write(arrow.RecordBatch) error
		Close() error
	}{sw, fw} {
		for _, r := range []arrow.RecordBatch{rec.NewSlice(0, 1), rec.NewSlice(1, 3)} {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
			r.Release()
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string][]byte{"stream": stream.Bytes(), "file": file.Bytes()} {
		for _, path := range []string{writeTemp(t, "in.arrow", string(data)), "-"} {
			got, sc := readAllInput(t, path, data, inputOptions{format: "arrow", mem: mem})
			if got != wantRows {
				t.Errorf("%s %s:\n%s\nwant:\n%s", name, path, got, wantRows)
			}
			if !sc.Equal(testTable(t)) {
				t.Errorf("schema = %s", sc)
			}
		}
	}
	// A column of a type that does not convert.
	bad := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.FixedWidthTypes.Date32}}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(bad), ipc.WithAllocator(mem))
	b := array.NewRecordBuilder(mem, bad)
	b.Field(0).(*array.Date32Builder).Append(1)
	r := b.NewRecordBatch()
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	r.Release()
	b.Release()
	w.Close()
	in, err := openInput(context.Background(), "-", &buf, testTable(t), inputOptions{format: "arrow", mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	for in.Next() {
	}
	if err := in.Err(); err == nil || !strings.Contains(err.Error(), "column id") {
		t.Errorf("date as bigint: %v", err)
	}
	in.Release()
	// Input columns that are not table columns.
	if _, err := inputTarget(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int8}}, nil), testTable(t), inputOptions{}); err == nil {
		t.Error("unknown input column accepted")
	}
}
