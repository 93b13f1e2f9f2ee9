package engine

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/pebble/v2"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/internal/pebbledb"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// statsOp is one write of the row count tests: keys from..to-1 of table
// (k BIGINT, n BIGINT, v BIGINT), n = v = k; cols set makes it partial.
type statsOp struct {
	mode     string
	from, to int64
	cols     []string
}

// statsOps add keys, update some, delete present and absent ones, and
// (partial) add and keep keys with partial updates and deletes.
var statsOps = []statsOp{
	{protocol.ModeUpsert, 0, 40, nil},
	{protocol.ModeUpsert, 20, 60, nil},
	{protocol.ModeDelete, 10, 30, nil},
	{protocol.ModeDelete, 55, 70, nil},
	{protocol.ModeUpsert, 0, 15, nil},
}

var partialOps = []statsOp{
	{protocol.ModeUpsert, 50, 80, []string{"k", "n"}},
	{protocol.ModeDelete, 0, 5, []string{"k", "n"}},   // v is set: the rows stay
	{protocol.ModeDelete, 70, 75, []string{"k", "n"}}, // v is null: the rows go
}

// The row count of a primary-key table is the rows its state holds, per
// bucket, after every write, whatever the merge engine makes of them: first
// rows keep the key, versions and sums rewrite it, ignored deletes keep it,
// partial deletes keep it while a column is set; and after undo.
func TestRowCountFollowsWrites(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    map[string]string
		partial bool
	}{
		{"last_row", nil, true},
		{"first_row", map[string]string{catalog.OptMergeEngine: catalog.MergeFirstRow, catalog.OptDeleteBehavior: catalog.DeleteIgnore}, false},
		{"versioned", map[string]string{catalog.OptMergeEngine: catalog.MergeVersioned, catalog.OptVersionColumn: "n", catalog.OptDeleteBehavior: catalog.DeleteIgnore}, false},
		{"aggregation", map[string]string{catalog.OptMergeEngine: catalog.MergeAggregation, "fields.n.agg": "sum", catalog.OptDeleteBehavior: catalog.DeleteAllow}, true},
		{"deletes ignored", map[string]string{catalog.OptDeleteBehavior: catalog.DeleteIgnore}, true},
		{"lake-enabled", map[string]string{catalog.OptDatalakeEnabled: "true"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := openEngine(t, t.TempDir())
			defer e.Close()
			createStatsTable(t, e, "t", c.opts)
			ops := statsOps
			if c.partial {
				ops = append(ops, partialOps...)
			}
			var marks []map[int]int64 // the offsets before each write
			for _, op := range ops {
				marks = append(marks, latestOffsets(t, e, "t"))
				writeStatsOp(t, e, "t", op)
				checkRowCount(t, e, "t")
			}
			res, err := e.Undo(t.Context(), protocol.UndoRequest{Table: "t", Offsets: bucketKeys(marks[1])})
			if err != nil {
				t.Fatal(err)
			}
			if res.UndoneKeys == 0 {
				t.Fatal("undo restored no key")
			}
			checkRowCount(t, e, "t")
		})
	}
}

// The row count survives a restart, is rebuilt by the replay of the
// changelog when the state store is lost, and a table from before row
// counts were kept is counted when it opens.
func TestRowCountAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	createStatsTable(t, e, "t", nil)
	for _, op := range append(statsOps, partialOps...) {
		writeStatsOp(t, e, "t", op)
	}
	want := checkRowCount(t, e, "t")
	restart := func(what string, between func()) {
		t.Helper()
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		between()
		e = openEngine(t, dir)
		if got := checkRowCount(t, e, "t"); !maps.Equal(got.Buckets, want.Buckets) {
			t.Fatalf("%s: %v, want %v as before", what, got, want)
		}
	}
	restart("after a restart", func() {})
	restart("with the state store lost (replayed from the changelog)", func() {
		if err := os.RemoveAll(filepath.Join(dir, "kv")); err != nil {
			t.Fatal(err)
		}
	})
	restart("with the counts gone (a store from before they were kept)", func() {
		dropRowCounts(t, filepath.Join(dir, "kv"))
	})
	writeStatsOp(t, e, "t", statsOp{protocol.ModeUpsert, 100, 110, nil})
	if got := checkRowCount(t, e, "t"); got.RowCount != want.RowCount+10 {
		t.Fatalf("after 10 new keys: %d rows, want %d", got.RowCount, want.RowCount+10)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// A log table's rows are its retained offsets; a WAL-image table, a
// lake-enabled log table and a view have no count.
func TestTableStatsOfOtherTables(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	createLogTable(t, e, "log")
	ws, err := e.OpenWrite(protocol.WriteRequest{Table: "log"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		writeBatch(t, ws, logRecord(7))
	}
	if got, err := e.TableStats(t.Context(), protocol.TableStatsRequest{Table: "log"}); err != nil || got.RowCount != 21 || got.Buckets[0] != 21 {
		t.Fatalf("log table: %+v (%v), want 21 rows in bucket 0", got, err)
	}
	createStatsTable(t, e, "wal", map[string]string{catalog.OptChangelogImage: catalog.ChangelogWAL})
	if _, err := e.CreateTable(t.Context(), catalog.TableSpec{Table: "lakelog", Columns: []catalog.Column{{Name: "v", Type: "BIGINT"}}, Options: map[string]string{catalog.OptDatalakeEnabled: "true"}}, false); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"wal", "lakelog", "log$changelog"} {
		if _, err := e.TableStats(t.Context(), protocol.TableStatsRequest{Table: table}); !errs.Is(err, errs.FailedPrecondition) {
			t.Errorf("%s: %v, want FAILED_PRECONDITION", table, err)
		}
	}
}

func createStatsTable(t *testing.T, e *Engine, name string, opts map[string]string) {
	t.Helper()
	o := map[string]string{"bucket.num": "3"}
	maps.Copy(o, opts)
	spec := catalog.TableSpec{Table: name, PrimaryKey: []string{"k"}, Options: o,
		Columns: []catalog.Column{{Name: "k", Type: "BIGINT"}, {Name: "n", Type: "BIGINT"}, {Name: "v", Type: "BIGINT"}}}
	if _, err := e.CreateTable(t.Context(), spec, false); err != nil {
		t.Fatal(err)
	}
}

func writeStatsOp(t *testing.T, e *Engine, table string, op statsOp) {
	t.Helper()
	cols := op.cols
	if cols == nil {
		cols = []string{"k", "n", "v"}
	}
	ws, err := e.OpenWrite(protocol.WriteRequest{Table: table, Mode: op.mode, Columns: op.cols})
	if err != nil {
		t.Fatal(err)
	}
	var fields []arrow.Field
	for _, c := range cols {
		fields = append(fields, arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Int64, Nullable: c != "k"})
	}
	b := array.NewRecordBuilder(memtest.Allocator(t), arrow.NewSchema(fields, nil))
	defer b.Release()
	for k := op.from; k < op.to; k++ {
		for i := range cols {
			b.Field(i).(*array.Int64Builder).Append(k)
		}
	}
	writeBatch(t, ws, b.NewRecordBatch())
}

func writeBatch(t *testing.T, ws *WriteStream, rec arrow.RecordBatch) {
	t.Helper()
	defer rec.Release()
	if _, err := ws.Write(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
}

func logRecord(n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memtest.Shared, arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil))
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
	}
	return b.NewRecordBatch()
}

// checkRowCount compares table-stats with the rows a scan of each bucket
// reads, and returns it.
func checkRowCount(t *testing.T, e *Engine, table string) protocol.TableStats {
	t.Helper()
	got, err := e.TableStats(t.Context(), protocol.TableStatsRequest{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	want := protocol.TableStats{Buckets: map[int]int64{}}
	for b := range 3 {
		var n int64
		scan(t, e, protocol.ScanRequest{Table: table, Buckets: []int{b}}, func(rec arrow.RecordBatch) { n += rec.NumRows() })
		want.Buckets[b] = n
		want.RowCount += n
	}
	if got.RowCount != want.RowCount || !maps.Equal(got.Buckets, want.Buckets) {
		t.Fatalf("table-stats %+v, the scan reads %+v", got, want)
	}
	return got
}

func latestOffsets(t *testing.T, e *Engine, table string) map[int]int64 {
	t.Helper()
	res, err := e.ListOffsets(t.Context(), protocol.OffsetsRequest{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	return res.Offsets
}

func bucketKeys(offsets map[int]int64) map[string]int64 {
	out := map[string]int64{}
	for b, o := range offsets {
		out[strconv.Itoa(b)] = o
	}
	return out
}

// dropRowCounts deletes every row count of a closed state store, as one
// from before they were kept: their keys start with 'n' (kv/store.go).
func dropRowCounts(t *testing.T, dir string) {
	t.Helper()
	db, err := pebbledb.Open("test", dir, &pebble.Options{FormatMajorVersion: pebble.FormatNewest}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteRange([]byte{'n'}, []byte{'n' + 1}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// A partitioned table answers per partition asked, each with its buckets,
// and the total of those: a primary-key table its current rows, a log table
// its retained ones.
func TestTableStatsOfPartitions(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	createOrders(t, e)
	write := func(mode string, rec arrow.RecordBatch) {
		t.Helper()
		if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "orders", Mode: mode}, rec); err != nil {
			t.Fatal(err)
		}
	}
	write(protocol.ModeUpsert, orderRows([]int64{1, 2, 3, 1, 2}, []string{"eu", "eu", "eu", "us", "us"}, []int64{1, 2, 3, 4, 5}))
	write(protocol.ModeUpsert, orderRows([]int64{1, 4}, []string{"eu", "us"}, []int64{9, 9}))
	write(protocol.ModeDelete, orderRows([]int64{2, 7}, []string{"eu", "eu"}, []int64{0, 0}))

	got, err := e.TableStats(t.Context(), protocol.TableStatsRequest{Table: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if got.RowCount != 5 || got.Buckets != nil || len(got.Partitions) != 2 || got.Partitions["eu"].RowCount != 2 || got.Partitions["us"].RowCount != 3 {
		t.Fatalf("table-stats %+v, want eu 2 and us 3 rows", got)
	}
	for name, p := range got.Partitions {
		var sum int64
		for _, n := range p.Buckets {
			sum += n
		}
		if len(p.Buckets) != 2 || sum != p.RowCount {
			t.Errorf("partition %s: %+v, want 2 buckets adding up to its rows", name, p)
		}
	}
	us, err := e.TableStats(t.Context(), protocol.TableStatsRequest{Table: "orders", Partitions: []string{"us"}})
	if err != nil || us.RowCount != 3 || len(us.Partitions) != 1 {
		t.Fatalf("table-stats of us: %+v (%v), want its 3 rows alone", us, err)
	}
	if _, err := e.TableStats(t.Context(), protocol.TableStatsRequest{Table: "orders", Partitions: []string{"asia"}}); !errs.Is(err, errs.NotFound) {
		t.Errorf("a partition that does not exist: %v, want NOT_FOUND", err)
	}

	if _, err := e.CreateTable(t.Context(), eventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{1, 2, 3}, []string{"d1", "d1", "d2"})); err != nil {
		t.Fatal(err)
	}
	if got, err := e.TableStats(t.Context(), protocol.TableStatsRequest{Table: "events"}); err != nil || got.RowCount != 3 || got.Partitions["d1"].RowCount != 2 {
		t.Fatalf("partitioned log table: %+v (%v), want 3 rows, 2 of them in d1", got, err)
	}
	createLogTable(t, e, "plain")
	if _, err := e.TableStats(t.Context(), protocol.TableStatsRequest{Table: "plain", Partitions: []string{"d1"}}); !errs.Is(err, errs.FailedPrecondition) {
		t.Errorf("partitions of a table that is not partitioned: %v, want FAILED_PRECONDITION", err)
	}
}
