package flight_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog/hadoop"
	icetable "github.com/apache/iceberg-go/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// withNote is a batch of orders with the added column note.
func withNote(t *testing.T, ts *testServer, from, n int) arrow.RecordBatch {
	t.Helper()
	base := orders(ts.mem, from, n)
	defer base.Release()
	b := array.NewStringBuilder(ts.mem)
	defer b.Release()
	for i := range n {
		b.Append("note-" + string(rune('a'+(from+i)%26)))
	}
	note := b.NewArray()
	defer note.Release()
	schema := arrow.NewSchema(append(slices.Clone(base.Schema().Fields()), arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
	return array.NewRecordBatch(schema, append(slices.Clone(base.Columns()), note), int64(n))
}

// Adding a column: batches written before read it as NULL, a stream opened
// before goes on in its schema, new streams write it, and all of it holds
// across a restart; filters and projection see the new column.
func TestAddColumnToLogTable(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 2, "order_id"), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 10, 2) // 0..19 before
	old, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	rec := orders(ts.mem, 20, 2) // the stream opens in the old schema
	_, err = old.Write(rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	info, err := ts.cl.AlterTable(ctx, client.AlterRequest{Table: "orders", AddColumns: []client.Column{{Name: "note", Type: "STRING"}}})
	if err != nil {
		t.Fatal(err)
	}
	if info.SchemaID != 2 || len(info.Columns) != 4 {
		t.Fatalf("after add_columns: schema id %d, %d columns; want 2 and 4", info.SchemaID, len(info.Columns))
	}
	rec = orders(ts.mem, 22, 3) // the open stream goes on in the old schema
	_, err = old.Write(rec)
	rec.Release()
	if err == nil {
		err = old.Close()
	}
	if err != nil {
		t.Fatalf("a stream opened before the column was added: %v", err)
	}
	writePK(t, ts, client.WriteRequest{Table: "orders"}, withNote(t, ts, 25, 5))
	check := func(when string) {
		t.Helper()
		lines := dump(t, ts, client.ScanRequest{Table: "orders", Columns: []string{"order_id", "note"}})
		slices.Sort(lines)
		nulls, notes := 0, 0
		for _, l := range lines {
			if l[len(l)-4:] == "NULL" {
				nulls++
			} else {
				notes++
			}
		}
		if nulls != 25 || notes != 5 {
			t.Fatalf("%s: %d rows with a NULL note and %d with one; want 25 and 5:\n%q", when, nulls, notes, lines)
		}
		for filter, want := range map[string]int{`{"is_not_null": "note"}`: 5, `{"is_null": "note"}`: 25, `{"eq": ["note", "note-z"]}`: 1} {
			if got := ids(t, ts, client.ScanRequest{Table: "orders", Filter: json.RawMessage(filter)}); len(got) != want {
				t.Fatalf("%s: filter %s gives %d rows, want %d", when, filter, len(got), want)
			}
		}
		cl := dump(t, ts, client.ScanRequest{Table: "orders$changelog", Columns: []string{"note"}})
		if len(cl) != 30 {
			t.Fatalf("%s: orders$changelog has %d rows, want 30", when, len(cl))
		}
	}
	check("after the alter")
	ts.restart(t)
	check("after a restart")
}

// A log-table batch may leave out nullable columns, in any order: they are
// NULL, as in Fluss, so that producers go on after a column was added. The
// stored frames hold every column (for a batch stored as received, the
// missing ones compressed in the table's codec), so they read back whole as
// stored and uncompressed. A NOT NULL column must be there, and a
// primary-key table's write still names its target columns (partial update).
func TestWritesWithoutNullableColumns(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	for _, codec := range []string{"zstd", "lz4_frame", "none"} {
		table := "orders_" + codec
		spec := ordersSpec(table, 1, "")
		spec.Options["table.log.arrow.compression.type"] = codec
		if _, err := ts.cl.CreateTable(ctx, spec, false); err != nil {
			t.Fatal(err)
		}
		if _, err := ts.cl.AlterTable(ctx, client.AlterRequest{Table: table, AddColumns: []client.Column{{Name: "note", Type: "STRING"}}}); err != nil {
			t.Fatal(err)
		}
		full := orders(ts.mem, 0, 4)
		// The producer's batch from before the alter, and one without amount
		// either, its columns in another order.
		noAmount := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{full.Schema().Field(1), full.Schema().Field(0)}, nil),
			[]arrow.Array{full.Column(1), full.Column(0)}, full.NumRows())
		full.Release()
		writePK(t, ts, client.WriteRequest{Table: table}, orders(ts.mem, 0, 2))
		writePK(t, ts, client.WriteRequest{Table: table}, noAmount) // a stream has one schema
		want := []string{"0 item-0 0 NULL", "1 item-1 1.5 NULL", "0 item-0 NULL NULL", "1 item-1 NULL NULL", "2 item-2 NULL NULL", "3 item-3 NULL NULL"}
		for _, read := range []string{"", "none"} {
			if got := dump(t, ts, client.ScanRequest{Table: table, Compression: read}); !slices.Equal(got, want) {
				t.Fatalf("%s read as %q:\n%q\nwant\n%q", table, read, got, want)
			}
		}
		one := orders(ts.mem, 0, 1)
		noID := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{one.Schema().Field(1)}, nil), []arrow.Array{one.Column(1)}, 1)
		one.Release()
		w, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: table})
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.Write(noID)
		noID.Release()
		w.Close()
		wantInvalid(t, table+": a batch without its NOT NULL column", err, `lacks column "order_id", which is NOT NULL`)
	}

	if _, err := ts.cl.CreateTable(ctx, pkSpec("fruit", nil), false); err != nil {
		t.Fatal(err)
	}
	w, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: "fruit"})
	if err != nil {
		t.Fatal(err)
	}
	rec := pkRows(ts.mem, []string{"k", "v"}, []any{1, 1.0})
	_, err = w.Write(rec)
	rec.Release()
	w.Close()
	wantInvalid(t, "a primary-key batch without a nullable column", err, `lacks column "s"`)
}

// A primary-key table: rows stored before read the new column as NULL, a
// partial update fills it, an aggregation table sums into it, a write
// stream opened before the change must reopen, and lookups return it.
func TestAddColumnToPrimaryKeyTable(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, pkSpec("fruit", nil), false); err != nil {
		t.Fatal(err)
	}
	all := []string{"k", "v", "s"}
	writePK(t, ts, client.WriteRequest{Table: "fruit"}, pkRows(ts.mem, all, []any{1, 1.0, "apple"}, []any{2, 2.0, "pear"}))
	open, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: "fruit"})
	if err != nil {
		t.Fatal(err)
	}
	rec := pkRows(ts.mem, all, []any{3, 3.0, "plum"})
	_, err = open.Write(rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.cl.AlterTable(ctx, client.AlterRequest{Table: "fruit", AddColumns: []client.Column{{Name: "n", Type: "BIGINT"}}}); err != nil {
		t.Fatal(err)
	}
	rec = pkRows(ts.mem, all, []any{4, 4.0, "fig"})
	_, err = open.Write(rec)
	rec.Release()
	wantCode(t, err, codes.FailedPrecondition)
	open.Close()

	// A partial update of k and the new column n.
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(ts.mem, schema)
	b.Field(0).(*array.Int64Builder).Append(2)
	b.Field(1).(*array.Int64Builder).Append(42)
	writePK(t, ts, client.WriteRequest{Table: "fruit", Columns: []string{"k", "n"}}, b.NewRecordBatch())
	b.Release()
	wantLines(t, dump(t, ts, client.ScanRequest{Table: "fruit"}), "1 1 apple NULL", "2 2 pear 42", "3 3 plum NULL")
	ts.restart(t)
	wantLines(t, dump(t, ts, client.ScanRequest{Table: "fruit"}), "1 1 apple NULL", "2 2 pear 42", "3 3 plum NULL")
	got, err := ts.cl.LookupInline(ctx, client.LookupRequest{Table: "fruit", Columns: []string{"k", "n"}}, []map[string]any{{"k": 1}, {"k": 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if got.NumRows() != 2 || got.NumCols() != 3 {
		t.Fatalf("lookup after add_columns: %d rows, %d columns", got.NumRows(), got.NumCols())
	}
}

func TestAddColumnBadInput(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		req  client.AlterRequest
		code codes.Code
	}{
		{client.AlterRequest{Table: "orders", AddColumns: []client.Column{{Name: "x", Type: "INT", Nullable: new(false)}}}, codes.InvalidArgument},
		{client.AlterRequest{Table: "orders", AddColumns: []client.Column{{Name: "item", Type: "INT"}}}, codes.InvalidArgument},
		{client.AlterRequest{Table: "orders", AddColumns: []client.Column{{Name: "x", Type: "NOPE"}}}, codes.InvalidArgument},
		{client.AlterRequest{Table: "orders$changelog", AddColumns: []client.Column{{Name: "x", Type: "INT"}}}, codes.FailedPrecondition},
	} {
		_, err := ts.cl.AlterTable(ctx, c.req)
		wantCode(t, err, c.code)
	}
}

// A lake-enabled table: the Iceberg table gets the column too, before the
// system columns, and rows tiered before read it as NULL, through fluxgate
// and through iceberg-go alike.
func TestAddColumnToLakeTable(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, lakeOrdersSpec("orders", nil), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 10, 1)
	if _, err := ts.cl.TierNow(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.cl.AlterTable(ctx, client.AlterRequest{Table: "orders", AddColumns: []client.Column{{Name: "note", Type: "STRING"}}}); err != nil {
		t.Fatal(err)
	}
	writePK(t, ts, client.WriteRequest{Table: "orders"}, withNote(t, ts, 10, 4))
	if _, err := ts.cl.TierNow(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	count := func(lines []string) (nulls, notes int) {
		for _, l := range lines {
			if l[len(l)-4:] == "NULL" {
				nulls++
			} else {
				notes++
			}
		}
		return nulls, notes
	}
	if nulls, notes := count(dump(t, ts, client.ScanRequest{Table: "orders$lake", Columns: []string{"order_id", "note"}})); nulls != 10 || notes != 4 {
		t.Errorf("orders$lake: %d NULL notes and %d notes, want 10 and 4", nulls, notes)
	}
	cat, err := hadoop.NewCatalog("reader", filepath.Join(ts.dir, "lake"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, icetable.Identifier{"fluss", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range tbl.Schema().Fields() {
		names = append(names, f.Name)
	}
	if want := []string{"order_id", "item", "amount", "note", "__bucket", "__offset", "__timestamp"}; !slices.Equal(names, want) {
		t.Errorf("the Iceberg table's columns are %v, want %v", names, want)
	}
	at, err := tbl.Scan(icetable.WithSelectedFields("order_id", "note")).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	if at.NumRows() != 14 || at.Column(1).NullN() != 10 {
		t.Errorf("iceberg-go reads %d rows with %d NULL notes, want 14 and 10", at.NumRows(), at.Column(1).NullN())
	}
}

// Writers and readers keep going while columns are added: every write is
// applied or refused whole (a primary-key write opened before the change is
// FAILED_PRECONDITION), every acknowledged row is there once, and scans
// opened before finish in their schema.
func TestAddColumnUnderLoad(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, pkSpec("kv", map[string]string{"bucket.num": "2"}), false); err != nil {
		t.Fatal(err)
	}
	all := []string{"k", "v", "s"}
	var wg sync.WaitGroup
	acked := make([]int, 4)
	for wr := range 4 {
		wg.Go(func() {
			for round := range 40 {
				w, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: "kv", Columns: all})
				if err != nil {
					t.Error(err)
					return
				}
				for i := range 5 {
					k := wr*1000 + round*5 + i
					rec := pkRows(ts.mem, all, []any{k, float64(k), "x"})
					_, err = w.Write(rec)
					rec.Release()
					if status.Code(err) == codes.FailedPrecondition {
						break // the schema changed under this stream: open another
					}
					if err != nil {
						t.Error(err)
						return
					}
					acked[wr]++
				}
				w.Close()
			}
		})
	}
	for i := range 5 {
		if _, err := ts.cl.AlterTable(ctx, client.AlterRequest{Table: "kv", AddColumns: []client.Column{{Name: fmt.Sprintf("c%d", i), Type: "INT"}}}); err != nil {
			t.Fatal(err)
		}
		dump(t, ts, client.ScanRequest{Table: "kv"})
	}
	wg.Wait()
	rows := dump(t, ts, client.ScanRequest{Table: "kv"})
	total := acked[0] + acked[1] + acked[2] + acked[3]
	if len(rows) != total {
		t.Fatalf("kv has %d rows, %d writes were acknowledged", len(rows), total)
	}
	info, err := ts.cl.DescribeTable(ctx, "kv")
	if err != nil || info.SchemaID != 6 {
		t.Fatalf("schema id %v (%v), want 6", info, err)
	}
}
