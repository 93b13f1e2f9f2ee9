package lake

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/predicate"
)

func tableInfo(t testing.TB, spec catalog.TableSpec, id int64) *catalog.TableInfo {
	t.Helper()
	info, err := catalog.NormalizeSpec(spec, catalog.Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	info.TableID = id
	return info
}

func col(name, typ string, nullable bool) catalog.Column {
	return catalog.Column{Name: name, Type: typ, Nullable: &nullable}
}

// checkedAllocator returns an allocator that must hold nothing at the end
// of the test.
func checkedAllocator(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// rows builds a record of the table's columns (id BIGINT, name STRING, small SMALLINT).
func rows(mem memory.Allocator, info *catalog.TableInfo, ids []int64, names []string) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, info.ArrowSchema())
	defer b.Release()
	for i, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(names[i])
		b.Field(2).(*array.Int16Builder).Append(int16(id))
	}
	return b.NewRecordBatch()
}

func commitRows(t *testing.T, mem memory.Allocator, lt *Table, info *catalog.TableInfo, bucket int, first int64, ids []int64, names []string, deletes []int64) *Snapshot {
	t.Helper()
	ctx := context.Background()
	rec := rows(mem, info, ids, names)
	defer rec.Release()
	offs, ts := make([]int64, len(ids)), make([]int64, len(ids))
	for i := range ids {
		offs[i], ts[i] = first+int64(i), 1_700_000_000_000+int64(i)
	}
	data, err := lt.DataRecord(ctx, mem, rec, bucket, offs, ts)
	if err != nil {
		t.Fatal(err)
	}
	c := Commit{
		Data:    func(yield func(arrow.RecordBatch, error) bool) { yield(data, nil) },
		Offsets: map[int]int64{bucket: first + int64(len(ids))},
	}
	if deletes != nil {
		drec := rows(mem, info, deletes, make([]string, len(deletes)))
		del, err := lt.KeyRecord(ctx, mem, drec)
		drec.Release()
		if err != nil {
			t.Fatal(err)
		}
		defer del.Release() // the delete writer does not release what it reads
		c.Deletes = func(yield func(arrow.RecordBatch, error) bool) { yield(del, nil) }
	}
	snap, _, err := lt.Commit(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func scanIDs(t *testing.T, mem memory.Allocator, lt *Table, snap int64, bucket int) []int64 {
	t.Helper()
	recs, err := lt.Scan(context.Background(), mem, snap, nil, bucket, []string{"id", "small", ColOffset}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Column(1).DataType().ID() != arrow.INT16 {
			t.Errorf("small comes back as %s, want the table's SMALLINT (int16)", rec.Column(1).DataType())
		}
		for i := range int(rec.NumRows()) {
			ids = append(ids, rec.Column(0).(*array.Int64).Value(i))
		}
		rec.Release()
	}
	slices.Sort(ids)
	return ids
}

func usersInfo(t testing.TB) *catalog.TableInfo {
	return tableInfo(t, catalog.TableSpec{Table: "fluss.users",
		Columns:    []catalog.Column{col("id", "BIGINT", false), col("name", "STRING", true), col("small", "SMALLINT", true)},
		PrimaryKey: []string{"id"}, Options: map[string]string{"bucket.num": "2"}}, 7)
}

// openLake opens the lake in warehouse and ensures info's table in it.
func openLake(t testing.TB, warehouse string, info *catalog.TableInfo) (*Lake, *Table) {
	t.Helper()
	ctx := context.Background()
	l, err := Open(ctx, Options{Warehouse: warehouse})
	if err != nil {
		t.Fatal(err)
	}
	lt, err := l.Ensure(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	return l, lt
}

func TestPrimaryKeyRoundsRetireOldRows(t *testing.T) {
	ctx := context.Background()
	mem := checkedAllocator(t)
	info := usersInfo(t)
	warehouse := t.TempDir()
	l, lt := openLake(t, warehouse, info)
	if s, err := lt.Current(); s != nil || err != nil {
		t.Fatalf("a new lake table has snapshot %v (err %v), want none", s, err)
	}
	// Round 1: ids 1, 2, 3 in bucket 0. Round 2: 2 updated, 3 deleted.
	commitRows(t, mem, lt, info, 0, 0, []int64{1, 2, 3}, []string{"a", "b", "c"}, nil)
	snap := commitRows(t, mem, lt, info, 0, 3, []int64{2}, []string{"b2"}, []int64{2, 3})
	if got, want := snap.Offsets, map[int]int64{0: 4}; !equalMaps(got, want) {
		t.Errorf("offsets after round 2 = %v, want %v", got, want)
	}
	if got := scanIDs(t, mem, lt, snap.ID, 0); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("bucket 0 after round 2 holds ids %v, want [1 2]", got)
	}
	if got := scanIDs(t, mem, lt, snap.ID, 1); len(got) != 0 {
		t.Errorf("bucket 1 holds ids %v, want none", got)
	}

	// An independent reader (iceberg-go's own catalog and scan) sees the same.
	cat, err := hadoop.NewCatalog("check", warehouse, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, table.Identifier{"fluss", "users"})
	if err != nil {
		t.Fatal(err)
	}
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	if at.NumRows() != 2 {
		t.Errorf("iceberg-go reads %d rows, want 2", at.NumRows())
	}
	if ids := tbl.Schema().IdentifierFieldIDs; len(ids) != 1 || tbl.Schema().Field(0).ID != ids[0] {
		t.Errorf("identifier field ids %v, want the id of column id (%d)", ids, tbl.Schema().Field(0).ID)
	}

	// Re-opened, the lake still knows the offsets.
	lt2, err := l.Ensure(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := lt2.Current(); err != nil || s == nil || s.ID != snap.ID {
		t.Errorf("re-opened lake table has snapshot %v (err %v), want %d", s, err, snap.ID)
	}
	// A table of the same name with another id does not take it over.
	other := tableInfo(t, info.TableSpec, 8)
	if _, err := l.Ensure(ctx, other); !errs.Is(err, errs.FailedPrecondition) {
		t.Errorf("Ensure for another table id: %v, want FAILED_PRECONDITION", err)
	}
	if err := l.Drop(ctx, info); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Ensure(ctx, other); err != nil {
		t.Errorf("Ensure after the old table was dropped: %v", err)
	}
}

func equalMaps(a, b map[int]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestCheckRefusesWhatIcebergCannotHold(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec catalog.TableSpec
	}{
		{"double bucket key", catalog.TableSpec{Table: "d.t", Columns: []catalog.Column{col("x", "DOUBLE", true)}, Options: map[string]string{"bucket.key": "x"}}},
		{"nanosecond timestamp", catalog.TableSpec{Table: "d.t", Columns: []catalog.Column{col("ts", "TIMESTAMP(9)", true)}}},
		{"float primary key", catalog.TableSpec{Table: "d.t", Columns: []catalog.Column{col("k", "FLOAT", false), col("v", "INT", true)}, PrimaryKey: []string{"k"}, Options: map[string]string{"bucket.key": "k"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := catalog.NormalizeSpec(tc.spec, catalog.Defaults{})
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(info); !errs.Is(err, errs.FailedPrecondition) {
				t.Errorf("Check = %v, want FAILED_PRECONDITION", err)
			}
		})
	}
	ok := tableInfo(t, catalog.TableSpec{Table: "d.t", Columns: []catalog.Column{
		col("a", "TINYINT", true), col("b", "TIME(3)", true), col("c", "TIMESTAMP(3)", true), col("d", "TIMESTAMP_LTZ(6)", true),
		col("e", "DECIMAL(10,2)", true), col("f", "ARRAY<INT>", true), col("g", "MAP<STRING, BIGINT>", true), col("h", "ROW<x INT, y STRING>", true),
		col("i", "BYTES", true), col("j", "DATE", true), col("k", "BOOLEAN", true)}}, 1)
	if err := Check(ok); err != nil {
		t.Errorf("Check of a table of every mappable type: %v", err)
	}
}

// The SQL catalog on SQLite: a transactional catalog without a service.
func TestSQLCatalog(t *testing.T) {
	ctx := context.Background()
	mem := checkedAllocator(t)
	dir := t.TempDir()
	l, err := Open(ctx, Options{Warehouse: "file://" + dir, Catalog: map[string]string{
		"type": "sql", "uri": "file:" + dir + "/catalog.db", "sql.driver": "sqlite", "sql.dialect": "sqlite"}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	info := usersInfo(t)
	lt, err := l.Ensure(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	snap := commitRows(t, mem, lt, info, 1, 0, []int64{5, 6}, []string{"e", "f"}, nil)
	if got := scanIDs(t, mem, lt, snap.ID, 1); !slices.Equal(got, []int64{5, 6}) {
		t.Errorf("bucket 1 holds %v, want [5 6]", got)
	}
}

// A filter prunes files by their column statistics before any is read,
// and the bucket picks the partition; ne prunes nothing (NULL semantics).
func TestScanPrunesFiles(t *testing.T) {
	ctx := context.Background()
	mem := checkedAllocator(t)
	// No bucket key: the partition is identity(__bucket).
	info := tableInfo(t, catalog.TableSpec{Table: "fluss.events",
		Columns: []catalog.Column{col("id", "BIGINT", false), col("name", "STRING", true), col("small", "SMALLINT", true)},
		Options: map[string]string{"bucket.num": "2"}}, 9)
	_, lt := openLake(t, t.TempDir(), info)
	var snap *Snapshot
	for r := range int64(3) { // three files of ids 100r..100r+9
		ids := make([]int64, 10)
		for i := range ids {
			ids[i] = 100*r + int64(i)
		}
		snap = commitRows(t, mem, lt, info, 0, 10*r, ids, make([]string, 10), nil)
	}
	files := func(bucket int, filter string) int {
		t.Helper()
		var b *predicate.Bound
		if filter != "" {
			e, err := predicate.Parse([]byte(filter))
			if err != nil {
				t.Fatal(err)
			}
			if b, err = predicate.Bind(e, info.ArrowSchema()); err != nil {
				t.Fatal(err)
			}
		}
		scan, tasks, err := lt.plan(ctx, snap.ID, nil, bucket, []string{"id"}, b)
		if err != nil {
			t.Fatal(err)
		}
		scan.Close()
		return len(tasks)
	}
	for _, c := range []struct {
		bucket int
		filter string
		want   int
	}{
		{0, "", 3},
		{1, "", 0},
		{0, `{"eq": ["id", 105]}`, 1},
		{0, `{"and": [{"ge": ["id", 100]}, {"lt": ["id", 250]}]}`, 2},
		{0, `{"in": ["id", [1, 205]]}`, 2},
		{0, `{"or": [{"eq": ["id", 1]}, {"starts_with": ["name", "x"]}]}`, 3},
		{0, `{"ne": ["id", 105]}`, 3},
		{0, `{"not": {"eq": ["id", 105]}}`, 3},
	} {
		if got := files(c.bucket, c.filter); got != c.want {
			t.Errorf("bucket %d, filter %s: %d files planned, want %d", c.bucket, c.filter, got, c.want)
		}
	}
}

func TestObjectStoreNeedsATransactionalCatalog(t *testing.T) {
	_, err := Open(context.Background(), Options{Warehouse: "s3://bucket/lake"})
	if err == nil || !strings.Contains(err.Error(), "SQL or REST catalog") {
		t.Fatalf("Open with an s3 warehouse and the filesystem catalog: %v", err)
	}
}

// Snapshots older than history.expire.max-snapshot-age-ms are expired after
// a commit; the current one always stays and reads the same; old metadata
// files are removed.
func TestOldSnapshotsExpire(t *testing.T) {
	mem := checkedAllocator(t)
	info := tableInfo(t, catalog.TableSpec{Table: "fluss.events",
		Columns: []catalog.Column{col("id", "BIGINT", false), col("name", "STRING", true), col("small", "SMALLINT", true)},
		Options: map[string]string{"iceberg.history.expire.max-snapshot-age-ms": "1", "iceberg.write.metadata.previous-versions-max": "2"}}, 3)
	warehouse := t.TempDir()
	_, lt := openLake(t, warehouse, info)
	var snap *Snapshot
	for r := range int64(5) {
		snap = commitRows(t, mem, lt, info, 0, 2*r, []int64{2 * r, 2*r + 1}, []string{"a", "b"}, nil)
		time.Sleep(2 * time.Millisecond)
	}
	if n := len(lt.current().Metadata().Snapshots()); n > 2 {
		t.Errorf("%d snapshots kept, want the old ones expired", n)
	}
	if got := scanIDs(t, mem, lt, snap.ID, 0); len(got) != 10 {
		t.Errorf("the current snapshot reads %d rows, want 10", len(got))
	}
	metas, err := filepath.Glob(filepath.Join(warehouse, "fluss", "events", "metadata", "*.metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(metas) > 4 {
		t.Errorf("%d metadata files kept, want old ones removed", len(metas))
	}
}

// Ensure runs for one table at once (creating a partitioned table races
// the tiering scheduler's opening of its lake): every caller gets the one
// table, and no commit conflict reaches them.
func TestConcurrentEnsureMakesOneTable(t *testing.T) {
	info := usersInfo(t)
	l, err := Open(context.Background(), Options{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const callers = 8
	uuids := make(chan string, callers)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			lt, err := l.Ensure(context.Background(), info)
			if err != nil {
				t.Error(err)
				return
			}
			uuids <- lt.Metadata().TableUUID().String()
		})
	}
	wg.Wait()
	close(uuids)
	seen := map[string]bool{}
	for u := range uuids {
		seen[u] = true
	}
	if len(seen) != 1 {
		t.Errorf("the callers got %d tables, want 1: %v", len(seen), seen)
	}
}
