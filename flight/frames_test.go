package flight_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// frameBatch builds a batch from JSON rows, with the types pandas and polars
// give a frame rather than the table's.
func frameBatch(t *testing.T, ts *testServer, fields []arrow.Field, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(ts.mem, arrow.NewSchema(fields, nil), strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func putOne(t *testing.T, ts *testServer, req client.WriteRequest, rec arrow.RecordBatch) error {
	t.Helper()
	w, err := ts.cl.NewWriter(ctxT(t), req)
	if err != nil {
		return err
	}
	if _, err := w.Write(rec); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// The Arrow types pandas 3 and polars make for a frame (large_string,
// string_view, large_binary, large_list, nanosecond and zoned
// timestamps) are written to the table's types and read back as them.
func TestFramesWriteAsTheyAre(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	spec := client.TableSpec{Table: "frames", Columns: []client.Column{
		{Name: "id", Type: "BIGINT"},
		{Name: "s", Type: "STRING"},
		{Name: "v", Type: "VARCHAR(8)"},
		{Name: "c", Type: "STRING"},
		{Name: "b", Type: "BYTES"},
		{Name: "ts", Type: "TIMESTAMP(6)"},
		{Name: "ltz", Type: "TIMESTAMP_LTZ(3)"},
		{Name: "tags", Type: "ARRAY<STRING>"},
	}, Options: map[string]string{"bucket.num": "1"}}
	if _, err := ts.cl.CreateTable(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "v", Type: arrow.BinaryTypes.StringView, Nullable: true},
		{Name: "c", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
		{Name: "ltz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}, Nullable: true},
		{Name: "tags", Type: arrow.LargeListOf(arrow.BinaryTypes.LargeString), Nullable: true},
	}
	rec := frameBatch(t, ts, fields, `[
		{"id": 1, "s": "a", "v": "x", "c": "red", "b": "AQI=", "ts": 1700000000123456000, "ltz": 1700000000123000, "tags": ["p", "q"]},
		{"id": 2, "s": null, "v": "y", "c": "red", "b": null, "ts": null, "ltz": null, "tags": null}
	]`)
	defer rec.Release()
	if err := putOne(t, ts, client.WriteRequest{Table: "frames"}, rec); err != nil {
		t.Fatalf("write of a frame's types: %v", err)
	}
	sc, err := ts.cl.Scan(ctx, client.ScanRequest{Table: "frames"}, client.WithConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	if !sc.Next() {
		t.Fatalf("no batch read back: %v", sc.Err())
	}
	got := sc.RecordBatch()
	tableTypes := []arrow.DataType{
		arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String, arrow.BinaryTypes.String, arrow.BinaryTypes.String,
		arrow.BinaryTypes.Binary, &arrow.TimestampType{Unit: arrow.Microsecond},
		&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, arrow.ListOf(arrow.BinaryTypes.String),
	}
	for i, f := range got.Schema().Fields() {
		if want := tableTypes[i]; !arrow.TypeEqual(f.Type, want) {
			t.Errorf("column %s read back as %s, want the table's %s", f.Name, f.Type, want)
		}
	}
	wantLines(t, rowsOf(got),
		`1 a x red AQI= 2023-11-14T22:13:20.123456 2023-11-14T22:13:20.123Z ["p","q"]`,
		`2 (null) y red (null) (null) (null) (null)`)
}

// A conversion that would change a value, or a type that is not another
// layout of the column's, is refused as before.
func TestFramesThatDoNotFitAreRefused(t *testing.T) {
	ts := start(t, engine.Options{})
	spec := client.TableSpec{Table: "strict", Columns: []client.Column{
		{Name: "id", Type: "BIGINT"}, {Name: "ts", Type: "TIMESTAMP(6)"},
	}}
	if _, err := ts.cl.CreateTable(ctxT(t), spec, false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		fields []arrow.Field
		rows   string
	}{
		{"nanoseconds a microsecond column cannot hold", []arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}},
		}, `[{"id": 1, "ts": 1700000000123456789}]`},
		{"a zone on a column without one", []arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		}, `[{"id": 1, "ts": 1700000000123456}]`},
		{"a narrower integer", []arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int32}, {Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		}, `[{"id": 1, "ts": 1700000000123456}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := frameBatch(t, ts, c.fields, c.rows)
			defer rec.Release()
			wantCode(t, putOne(t, ts, client.WriteRequest{Table: "strict"}, rec), codes.InvalidArgument)
		})
	}
}

// Primary-key writes and lookups take large_string and string_view keys.
func TestFrameKeysWriteAndLookUp(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	spec := client.TableSpec{
		Table:      "users",
		Columns:    []client.Column{{Name: "uid", Type: "STRING"}, {Name: "name", Type: "STRING"}},
		PrimaryKey: []string{"uid"},
		Options:    map[string]string{"bucket.num": "2"},
	}
	if _, err := ts.cl.CreateTable(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	rec := frameBatch(t, ts, []arrow.Field{
		{Name: "uid", Type: arrow.BinaryTypes.LargeString}, {Name: "name", Type: arrow.BinaryTypes.StringView, Nullable: true},
	}, `[{"uid": "u1", "name": "ann"}, {"uid": "u2", "name": "bob"}]`)
	defer rec.Release()
	if err := putOne(t, ts, client.WriteRequest{Table: "users"}, rec); err != nil {
		t.Fatalf("upsert of a frame's types: %v", err)
	}
	l, err := ts.cl.Lookup(ctx, client.LookupRequest{Table: "users"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	keys := frameBatch(t, ts, []arrow.Field{{Name: "uid", Type: arrow.BinaryTypes.StringView}}, `[{"uid": "u2"}, {"uid": "u3"}, {"uid": "u1"}]`)
	defer keys.Release()
	ans, _, err := l.Lookup(keys)
	if err != nil {
		t.Fatalf("lookup with string_view keys: %v", err)
	}
	defer ans.Release()
	wantLines(t, rowsOf(ans), "0 u2 bob", "2 u1 ann")
}
