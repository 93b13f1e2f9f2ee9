package lake

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/predicate"
	"github.com/fluxgate-io/fluxgate/row"
)

// partitionedInfo is spec's table partitioned by keys.
func partitionedInfo(t testing.TB, spec catalog.TableSpec, keys []string, id int64) *catalog.TableInfo {
	t.Helper()
	spec.PartitionKeys = keys
	return tableInfo(t, spec, id)
}

// commitPartitions commits one round: for each partition id, rows of
// bucket 0 from offset first.
func commitPartitions(t *testing.T, mem memory.Allocator, lt *Table, info *catalog.TableInfo, rounds []partRound, forget ...int64) *Snapshot {
	t.Helper()
	ctx := context.Background()
	var recs, deletes []arrow.RecordBatch
	defer func() {
		for _, d := range deletes {
			d.Release() // the delete writer does not release what it reads
		}
	}()
	c := Commit{Partitions: map[int64]PartitionOffsets{}, Forget: forget}
	tableRecord := func(rows []row.Row) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, info.ArrowSchema())
		defer b.Release()
		for _, vals := range rows {
			row.AppendRow(b, vals)
		}
		return b.NewRecordBatch()
	}
	lakeRecord := func(rows []row.Row, first int64) arrow.RecordBatch {
		rec := tableRecord(rows)
		n := int(rec.NumRows())
		offs, ts := make([]int64, n), make([]int64, n)
		for i := range n {
			offs[i], ts[i] = first+int64(i), 1_700_000_000_000
		}
		data, err := lt.DataRecord(ctx, mem, rec, 0, offs, ts)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, r := range rounds {
		recs = append(recs, lakeRecord(r.rows, r.first))
		c.Partitions[r.id] = PartitionOffsets{Name: r.name, Buckets: map[int]int64{0: r.first + int64(len(r.rows)+len(r.deletes))}}
		if len(r.deletes) > 0 {
			rec := tableRecord(r.deletes)
			keys, err := lt.KeyRecord(ctx, mem, rec)
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
			deletes = append(deletes, keys)
		}
	}
	if len(deletes) > 0 {
		c.Deletes = func(yield func(arrow.RecordBatch, error) bool) {
			for _, d := range deletes {
				if !yield(d, nil) {
					return
				}
			}
		}
	}
	c.Data = func(yield func(arrow.RecordBatch, error) bool) {
		for i, rec := range recs {
			if !yield(rec, nil) {
				for _, rest := range recs[i+1:] {
					rest.Release()
				}
				return
			}
		}
	}
	snap, _, err := lt.Commit(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

type partRound struct {
	id      int64
	name    string
	first   int64
	rows    []row.Row
	deletes []row.Row // of a primary-key table: rows whose keys go
}

func eventsSpec() catalog.TableSpec {
	return catalog.TableSpec{Table: "fluss.events",
		Columns: []catalog.Column{col("dt", "STRING", false), col("id", "BIGINT", false), col("name", "STRING", true)},
		Options: map[string]string{"bucket.num": "2"}}
}

// scanPartition reads the ids of one partition's bucket 0 and counts the
// files its plan opens.
func scanPartition(t *testing.T, mem memory.Allocator, lt *Table, snap int64, part Partition, filter string) (ids []int64, files int) {
	t.Helper()
	ctx := context.Background()
	var b *predicate.Bound
	if filter != "" {
		e, err := predicate.Parse([]byte(filter))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = predicate.Bind(e, lt.m.table); err != nil {
			t.Fatal(err)
		}
	}
	scan, tasks, err := lt.plan(ctx, snap, part, 0, []string{"id"}, b)
	if err != nil {
		t.Fatal(err)
	}
	scan.Close()
	recs, err := lt.Scan(ctx, mem, snap, part, 0, []string{"id"}, b)
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			ids = append(ids, rec.Column(0).(*array.Int64).Value(i))
		}
		rec.Release()
	}
	slices.Sort(ids)
	return ids, len(tasks)
}

// A day-partitioned table: the spec is identity(dt) then the bucket; each
// partition's offsets are kept by id; a partition's scan opens only its
// files; a dropped (forgotten) partition's rows stay readable; reopening
// keeps it all.
func TestPartitionedLake(t *testing.T) {
	ctx := context.Background()
	mem := checkedAllocator(t)
	info := partitionedInfo(t, eventsSpec(), []string{"dt"}, 11)
	warehouse := t.TempDir()
	l, lt := openLake(t, warehouse, info)

	var fields []string
	spec := lt.current().Spec()
	for _, f := range spec.Fields() {
		fields = append(fields, fmt.Sprintf("%s(%s)", f.Transform, f.Name))
	}
	if want := []string{"identity(dt)", "identity(__bucket)"}; !slices.Equal(fields, want) {
		t.Errorf("partition spec %v, want %v", fields, want)
	}

	days := []string{"20261201", "20261202", "20261203"}
	var round []partRound
	for i, d := range days {
		round = append(round, partRound{id: int64(100 + i), name: d, rows: []row.Row{{d, int64(10 * i), "a"}, {d, int64(10*i + 1), "b"}}})
	}
	commitPartitions(t, mem, lt, info, round)
	// A second round of the first day only: its file joins the first.
	snap := commitPartitions(t, mem, lt, info, []partRound{{id: 100, name: days[0], first: 2, rows: []row.Row{{days[0], int64(2), "c"}}}})
	want := map[int64]PartitionOffsets{
		100: {Name: days[0], Buckets: map[int]int64{0: 3}},
		101: {Name: days[1], Buckets: map[int]int64{0: 2}},
		102: {Name: days[2], Buckets: map[int]int64{0: 2}},
	}
	if !reflect.DeepEqual(snap.Partitions, want) || snap.Offsets != nil {
		t.Errorf("snapshot offsets %v, partitions %v; want none, %v", snap.Offsets, snap.Partitions, want)
	}

	for _, c := range []struct {
		day    string
		filter string
		ids    []int64
		files  int
	}{
		{days[0], "", []int64{0, 1, 2}, 2},
		{days[1], "", []int64{10, 11}, 1},
		{days[2], `{"eq": ["id", 21]}`, []int64{21}, 1},
		{days[2], `{"eq": ["id", 5]}`, nil, 0},
	} {
		ids, files := scanPartition(t, mem, lt, snap.ID, Partition{c.day}, c.filter)
		if !slices.Equal(ids, c.ids) || files != c.files {
			t.Errorf("partition %s, filter %q: ids %v from %d files, want %v from %d", c.day, c.filter, ids, files, c.ids, c.files)
		}
	}
	if files, bytes := lt.ScanStats(); files != 4 || bytes <= 0 {
		t.Errorf("the scans opened %d files of %d bytes, want the 4 planned", files, bytes)
	}
	if ids, files := scanPartition(t, mem, lt, snap.ID, Partition{"20261130"}, ""); len(ids) != 0 || files != 0 {
		t.Errorf("a partition the lake lacks reads ids %v from %d files, want none", ids, files)
	}

	// Day 1 is dropped from fluxgate: its offsets go, its rows stay.
	snap = commitPartitions(t, mem, lt, info, []partRound{{id: 102, name: days[2], first: 2, rows: []row.Row{{days[2], int64(22), "c"}}}}, 100)
	if _, ok := snap.Partitions[100]; ok || len(snap.Partitions) != 2 {
		t.Errorf("after forgetting partition 100 the snapshot holds %v", snap.Partitions)
	}
	parts, err := lt.Partitions(ctx, snap.ID)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(parts, func(a, b Partition) int { return row.Compare(arrow.BinaryTypes.String, a[0], b[0]) })
	if want := []Partition{{days[0]}, {days[1]}, {days[2]}}; !reflect.DeepEqual(parts, want) {
		t.Errorf("lake partitions %v, want %v", parts, want)
	}
	if ids, _ := scanPartition(t, mem, lt, snap.ID, Partition{days[0]}, ""); !slices.Equal(ids, []int64{0, 1, 2}) {
		t.Errorf("the dropped partition reads %v, want [0 1 2]", ids)
	}

	// Reopened: the same offsets, and compaction keeps them and the rows.
	lt2, err := l.Ensure(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := lt2.Current(); err != nil || !reflect.DeepEqual(s.Partitions, snap.Partitions) {
		t.Errorf("reopened: partitions %v (err %v), want %v", s.Partitions, err, snap.Partitions)
	}
	st, err := lt2.Compact(ctx, CompactOptions{OrphanAge: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Committed || st.RewrittenFiles != 4 || !reflect.DeepEqual(st.Snapshot.Partitions, snap.Partitions) {
		t.Errorf("compaction: committed %v, %d files rewritten, partitions %v; want 4 rewritten (2 per day of 2 files), %v", st.Committed, st.RewrittenFiles, st.Snapshot.Partitions, snap.Partitions)
	}
	for _, c := range []struct {
		day string
		ids []int64
	}{{days[0], []int64{0, 1, 2}}, {days[1], []int64{10, 11}}, {days[2], []int64{20, 21, 22}}} {
		if ids, files := scanPartition(t, mem, lt2, st.Snapshot.ID, Partition{c.day}, ""); !slices.Equal(ids, c.ids) || files != 1 {
			t.Errorf("compacted partition %s reads %v from %d files, want %v from 1", c.day, ids, files, c.ids)
		}
	}
}

// Identity partitions take every partition-key type Fluss allows (Fluss's
// Iceberg tier takes STRING only): the values written come back from the
// files' partition tuples, and a partition's scan finds its row.
func TestEveryPartitionKeyType(t *testing.T) {
	ctx := context.Background()
	mem := checkedAllocator(t)
	types := []string{"STRING", "CHAR(3)", "BOOLEAN", "BYTES", "BINARY(2)", "TINYINT", "SMALLINT", "INT", "BIGINT",
		"FLOAT", "DOUBLE", "DATE", "TIME(3)", "TIME(6)", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP_LTZ(6)"}
	cols := []catalog.Column{col("id", "BIGINT", false)}
	var keys []string
	for i, typ := range types {
		keys = append(keys, fmt.Sprintf("k%d", i))
		cols = append(cols, col(keys[i], typ, false))
	}
	info := partitionedInfo(t, catalog.TableSpec{Table: "fluss.keys", Columns: cols}, keys, 12)
	if err := Check(info); err != nil {
		t.Fatalf("Check: %v", err)
	}
	_, lt := openLake(t, t.TempDir(), info)
	sc := info.ArrowSchema()
	value := func(i int, typ arrow.DataType) any {
		switch typ.ID() {
		case arrow.STRING:
			return []string{"abc", "xyz"}[i]
		case arrow.BOOL:
			return i == 1
		case arrow.BINARY:
			return []byte{byte(i), 7}
		case arrow.FIXED_SIZE_BINARY:
			return []byte{byte(i), 9}
		case arrow.FLOAT32, arrow.FLOAT64:
			v, err := row.Coerce(typ, []float64{0.5, 1e30}[i]) // Iceberg's path of 1e30 has a '+'
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		v, err := row.Coerce(typ, map[arrow.Type]any{
			arrow.INT8: 1 + i, arrow.INT16: 2 + i, arrow.INT32: 3 + i, arrow.INT64: 4 + i,
			arrow.DATE32: []string{"2026-12-01", "2026-12-02"}[i], arrow.TIME32: []string{"10:00:00.123", "11:00:00"}[i],
			arrow.TIME64:    []string{"10:00:00.123456", "11:00:00"}[i],
			arrow.TIMESTAMP: []string{"2026-12-01T10:00:00.123", "2026-12-02T00:00:00"}[i],
		}[typ.ID()])
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var parts []Partition
	var rows []row.Row
	for i := range 2 {
		r := row.Row{int64(i)}
		var part Partition
		for k := range keys {
			v := value(i, sc.Field(k+1).Type)
			if v == nil {
				t.Fatalf("no value for %s", sc.Field(k+1).Type)
			}
			r, part = append(r, v), append(part, v)
		}
		rows, parts = append(rows, r), append(parts, part)
	}
	commitPartitions(t, mem, lt, info, []partRound{{id: 1, name: "p0", rows: rows[:1]}, {id: 2, name: "p1", first: 0, rows: rows[1:]}})
	checkPathsResolve(t, lt)
	// A second round, so that compaction has files to pack, in new paths.
	commitPartitions(t, mem, lt, info, []partRound{{id: 1, name: "p0", first: 1, rows: rows[:1]}, {id: 2, name: "p1", first: 1, rows: rows[1:]}})
	st, err := lt.Compact(ctx, CompactOptions{})
	if err != nil || st.AddedFiles != 2 {
		t.Fatalf("compaction added %d files (%v), want 2", st.AddedFiles, err)
	}
	checkPathsResolve(t, lt)
	snap := st.Snapshot
	got, err := lt.Partitions(ctx, snap.ID)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b Partition) int { return row.Compare(arrow.BinaryTypes.String, a[0], b[0]) })
	if !reflect.DeepEqual(got, parts) {
		t.Errorf("lake partitions\n%#v\nwant\n%#v", got, parts)
	}
	for i, part := range parts {
		if ids, files := scanPartition(t, mem, lt, snap.ID, part, ""); !slices.Equal(ids, []int64{int64(i), int64(i)}) || files != 1 {
			t.Errorf("partition %d reads ids %v from %d files, want [%d %d] from 1", i, ids, files, i, i)
		}
	}
	// Every partition field is an identity of its key, then identity(__bucket).
	spec := lt.current().Spec()
	if n := spec.NumFields(); n != len(keys)+1 {
		t.Fatalf("%d partition fields, want %d", n, len(keys)+1)
	}
	for i := range keys {
		if f := spec.Field(i); f.Name != keys[i] || f.Transform != (iceberg.IdentityTransform{}) {
			t.Errorf("partition field %d is %s(%s), want identity(%s)", i, f.Transform, f.Name, keys[i])
		}
	}
}

// A primary-key table partitioned by day: a round's updates and deletes
// retire rows in the partitions they touch by position deletes carrying
// that partition's tuple, and compaction applies them per partition.
func TestPartitionedPrimaryKeyLake(t *testing.T) {
	ctx := context.Background()
	mem := checkedAllocator(t)
	spec := eventsSpec()
	spec.PrimaryKey = []string{"dt", "id"}
	spec.Options = map[string]string{"bucket.num": "2", "bucket.key": "id"}
	info := partitionedInfo(t, spec, []string{"dt"}, 13)
	_, lt := openLake(t, t.TempDir(), info)
	commitPartitions(t, mem, lt, info, []partRound{
		{id: 1, name: "d1", rows: []row.Row{{"d1", int64(1), "a"}, {"d1", int64(2), "b"}}},
		{id: 2, name: "d2", rows: []row.Row{{"d2", int64(1), "c"}, {"d2", int64(5), "d"}}},
	})
	// Key (d1, 1) is updated and (d2, 5) deleted; (d2, 1) is untouched.
	snap := commitPartitions(t, mem, lt, info, []partRound{
		{id: 1, name: "d1", first: 2, rows: []row.Row{{"d1", int64(1), "a2"}}, deletes: []row.Row{{"d1", int64(1), nil}}},
		{id: 2, name: "d2", first: 2, deletes: []row.Row{{"d2", int64(5), nil}}},
	})
	check := func(snap int64, phase string) {
		t.Helper()
		for _, c := range []struct {
			day string
			ids []int64
		}{{"d1", []int64{1, 2}}, {"d2", []int64{1}}} {
			if ids, _ := scanPartition(t, mem, lt, snap, Partition{c.day}, ""); !slices.Equal(ids, c.ids) {
				t.Errorf("%s: partition %s reads ids %v, want %v", phase, c.day, ids, c.ids)
			}
		}
	}
	check(snap.ID, "after the deletes")
	var deleteParts []string
	scan, tasks, err := lt.plan(ctx, snap.ID, Partition{"d2"}, 0, []string{"id"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	scan.Close()
	for _, task := range tasks {
		for _, d := range task.DeleteFiles {
			deleteParts = append(deleteParts, fmt.Sprint(d.Partition()[firstPartitionFieldID]))
		}
	}
	if want := []string{"d2"}; !slices.Equal(deleteParts, want) {
		t.Errorf("the delete files of partition d2 are of days %v, want %v", deleteParts, want)
	}
	st, err := lt.Compact(ctx, CompactOptions{OrphanAge: -1})
	if err != nil {
		t.Fatal(err)
	}
	if st.RemovedDeleteFiles != 2 {
		t.Errorf("compaction removed %d delete files, want 2 (one per partition)", st.RemovedDeleteFiles)
	}
	check(st.Snapshot.ID, "after compaction")
}
