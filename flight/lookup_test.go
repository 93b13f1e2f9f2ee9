package flight_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

func stringKeys(ts *testServer, name string, keys ...string) arrow.RecordBatch {
	b := array.NewRecordBuilder(ts.mem, arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.BinaryTypes.String}}, nil))
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues(keys, nil)
	return b.NewRecordBatch()
}

func rowsOf(rec arrow.RecordBatch) []string {
	var out []string
	for i := range int(rec.NumRows()) {
		s := ""
		for c := range int(rec.NumCols()) {
			s += " " + rec.Column(c).ValueStr(i)
		}
		out = append(out, s[1:])
	}
	return out
}

// Reference C.4: a stream user_a, user_b, user_a, user_c looked up with
// insert-if-not-exists gets ids 1, 2, 1, 3.
func TestDictionaryLookup(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	spec := client.TableSpec{
		Table:      "uid_mapping",
		Columns:    []client.Column{{Name: "uid", Type: "STRING"}, {Name: "uid_int", Type: "INT"}},
		PrimaryKey: []string{"uid"},
		Options:    map[string]string{"auto-increment.fields": "uid_int", "bucket.num": "2"},
	}
	if _, err := ts.cl.CreateTable(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	l, err := ts.cl.Lookup(ctx, client.LookupRequest{Table: "uid_mapping", InsertIfNotExists: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	keys := stringKeys(ts, "uid", "user_a", "user_b", "user_a", "user_c")
	defer keys.Release()
	ans, meta, err := l.Lookup(keys)
	if err != nil {
		t.Fatal(err)
	}
	defer ans.Release()
	if meta.Keys != 4 || meta.Rows != 4 {
		t.Fatalf("meta %+v", meta)
	}
	wantLines(t, rowsOf(ans), "0 user_a 1", "1 user_b 2", "2 user_a 1", "3 user_c 3")
	log := dump(t, ts, client.ScanRequest{Table: "uid_mapping$changelog", Columns: []string{"_change_type", "uid", "uid_int"}})
	slices.Sort(log)
	wantLines(t, log, "insert user_a 1", "insert user_b 2", "insert user_c 3")
}

func TestPointAndPrefixLookups(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	orders := client.TableSpec{
		Table:      "orders",
		Columns:    []client.Column{{Name: "city", Type: "STRING"}, {Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "DOUBLE"}},
		PrimaryKey: []string{"city", "id"},
		Options:    map[string]string{"bucket.key": "city", "bucket.num": "3"},
	}
	info, err := ts.cl.CreateTable(ctx, orders, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Indexes) != 2 || info.Indexes[1].Name != "prefix" {
		t.Fatalf("indexes %+v, want primary_key and prefix", info.Indexes)
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "city", Type: arrow.BinaryTypes.String}, {Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(ts.mem, sc)
	for i, city := range []string{"oslo", "rome", "oslo", "lima", "oslo"} {
		b.Field(0).(*array.StringBuilder).Append(city)
		b.Field(1).(*array.Int64Builder).Append(int64(i))
		b.Field(2).(*array.Float64Builder).Append(float64(i) * 10)
	}
	writePK(t, ts, client.WriteRequest{Table: "orders"}, b.NewRecordBatch())
	b.Release()

	pl, err := ts.cl.Lookup(ctx, client.LookupRequest{Table: "orders", Prefix: true, Columns: []string{"id", "amount"}})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	keys := stringKeys(ts, "city", "rome", "paris", "oslo")
	defer keys.Release()
	ans, meta, err := pl.Lookup(keys)
	if err != nil {
		t.Fatal(err)
	}
	defer ans.Release()
	if meta.Keys != 3 || meta.Rows != 4 {
		t.Fatalf("prefix lookup meta %+v", meta)
	}
	wantLines(t, rowsOf(ans), "0 1 10", "2 0 0", "2 2 20", "2 4 40")

	got, err := ts.cl.LookupInline(ctx, client.LookupRequest{Table: "orders"}, []map[string]any{{"city": "oslo", "id": 2}, {"city": "oslo", "id": 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if got.NumRows() != 1 {
		t.Fatalf("inline lookup found %d rows, want 1", got.NumRows())
	}

	// A table whose bucket key is its whole key has no prefix index.
	if _, err := ts.cl.CreateTable(ctx, pkSpec("plain", nil), false); err != nil {
		t.Fatal(err)
	}
	nl, err := ts.cl.Lookup(ctx, client.LookupRequest{Table: "plain", Prefix: true})
	if err == nil {
		k := pkRows(ts.mem, []string{"k"}, []any{1})
		_, _, err = nl.Lookup(k)
		k.Release()
		nl.Close()
	}
	wantCode(t, err, codes.FailedPrecondition)
	if err != nil && !strings.Contains(err.Error(), "bucket key (k)") {
		t.Fatalf("error %q does not name the bucket key", err)
	}
}
