package engine

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// lakeEventsSpec is eventsSpec with the lake enabled.
func lakeEventsSpec() protocol.TableSpec {
	spec := eventsSpec()
	spec.Options = maps.Clone(spec.Options)
	spec.Options["table.datalake.enabled"] = "true"
	return spec
}

// lakeIDs reads the ids each partition of the table's latest lake snapshot
// holds, by partition name, through the lake table.
func lakeIDs(t *testing.T, e *Engine, table string) map[string][]int64 {
	t.Helper()
	ctx := context.Background()
	o, info, _, err := e.lakes.Resolve(table)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := e.lakes.OwnerSnapshot(ctx, o, info)
	if err != nil || snap == nil {
		t.Fatalf("lake snapshot %v, %v", snap, err)
	}
	lt, err := e.lakes.OwnerTable(ctx, o, info)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := lt.NamedPartitions(ctx, snap.ID, info)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int64{}
	for _, p := range parts {
		for b := range info.BucketCount() {
			recs, err := lt.Scan(ctx, memtest.Allocator(t), snap.ID, p.Values, b, []string{"id"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for rec, err := range recs {
				if err != nil {
					t.Fatal(err)
				}
				out[p.Name] = append(out[p.Name], rec.Column(0).(*array.Int64).Values()...)
				rec.Release()
			}
		}
		slices.Sort(out[p.Name])
	}
	return out
}

// idsByPartition lists the ids of scanRows's rows by partition.
func idsByPartition(rows map[string]map[int64]string) map[string][]int64 {
	out := map[string][]int64{}
	for name, ids := range rows {
		out[name] = slices.Sorted(maps.Keys(ids))
	}
	return out
}

// lakeTableOf opens a table's lake table.
func lakeTableOf(t *testing.T, e *Engine, table string) *lake.Table {
	t.Helper()
	o, info, _, err := e.lakes.Resolve(table)
	if err != nil {
		t.Fatal(err)
	}
	lt, err := e.lakes.OwnerTable(t.Context(), o, info)
	if err != nil {
		t.Fatal(err)
	}
	return lt
}

// checkLakeOnly checks that $lake and the union read list the dropped day
// 20261201 as a partition only in the lake, with id -1, and read its rows;
// a filter on the day reads it alone.
func checkLakeOnly(t *testing.T, e *Engine, lakeRows map[string][]int64) {
	t.Helper()
	for _, table := range []string{"events$lake", "events"} {
		plan, rows := scanRows(t, e, protocol.ScanRequest{Table: table})
		got := idsByPartition(rows)
		if !reflect.DeepEqual(got["20261201"], lakeRows["20261201"]) || len(plan.Partitions) != 3 {
			t.Errorf("%s: partitions %v, rows %v; want the dropped 20261201 to read %v", table, plan.Partitions, got, lakeRows["20261201"])
		}
		if p := plan.Partitions[0]; p.PartitionName != "20261201" || p.PartitionID != -1 || p.Spec["dt"] != "20261201" {
			t.Errorf("%s: the lake-only partition is planned as %+v, want id -1", table, p)
		}
		plan, rows = scanRows(t, e, protocol.ScanRequest{Table: table, Filter: []byte(`{"eq": ["dt", "20261201"]}`)})
		if got := idsByPartition(rows); len(plan.Partitions) != 1 || !reflect.DeepEqual(got, map[string][]int64{"20261201": lakeRows["20261201"]}) {
			t.Errorf("%s filtered to the dropped day: %d partitions, rows %v", table, len(plan.Partitions), got)
		}
	}
}

// offsetsSum sums each partition's bucket offsets.
func offsetsSum(po protocol.PartitionOffsets) map[string]int64 {
	out := map[string]int64{}
	for name, buckets := range po {
		for _, o := range buckets {
			out[name] += o
		}
	}
	return out
}

// A day-partitioned lake table: a round tiers every partition into one
// snapshot with offsets per partition; a dropped partition's offsets leave
// the snapshot and its rows stay in the lake, also after a restart.
func TestPartitionedTableTiering(t *testing.T) {
	dir := t.TempDir()
	e := openPartitioned(t, dir, Options{})
	defer func() { e.Close() }()
	if _, err := e.CreateTable(t.Context(), lakeEventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"},
		eventRows([]int64{1, 2, 3, 4, 5, 6}, []string{"20261201", "20261202", "20261201", "20261203", "20261201", "20261202"})); err != nil {
		t.Fatal(err)
	}
	snap, err := e.TierNow(t.Context(), "events")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"20261201": 3, "20261202": 2, "20261203": 1}; snap.Offsets != nil || !reflect.DeepEqual(offsetsSum(snap.PartitionOffsets), want) {
		t.Fatalf("tier-now: offsets %v, partition offsets %v; want none, sums %v", snap.Offsets, snap.PartitionOffsets, want)
	}
	if got, err := e.LakeSnapshot(t.Context(), "events"); err != nil || !reflect.DeepEqual(got, snap) {
		t.Errorf("lake-snapshot %+v (%v), want tier-now's %+v", got, err, snap)
	}
	lakeAt := snap.PartitionOffsets.Clone() // every bucket: 0 where the lake holds nothing
	for _, buckets := range lakeAt {
		for b := range 2 {
			if _, ok := buckets[b]; !ok {
				buckets[b] = 0
			}
		}
	}
	if got, err := e.ListOffsets(t.Context(), protocol.OffsetsRequest{Table: "events$lake"}); err != nil || !reflect.DeepEqual(got.PartitionOffsets, lakeAt) {
		t.Errorf("list-offsets of events$lake %v (%v), want the snapshot's %v", got.PartitionOffsets, err, lakeAt)
	}
	want := map[string][]int64{"20261201": {1, 3, 5}, "20261202": {2, 6}, "20261203": {4}}
	if got := lakeIDs(t, e, "events"); !reflect.DeepEqual(got, want) {
		t.Errorf("lake holds %v, want %v", got, want)
	}

	// $lake equals what was tiered, per partition; so does the union read,
	// with the rows written since.
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{8}, []string{"20261202"})); err != nil {
		t.Fatal(err)
	}
	var lag int64
	for _, pt := range e.tables.All() {
		if offsets, _, ok := e.lakes.Lag(pt); ok && pt.Current().Info.Partition() != nil {
			lag += offsets
		}
	}
	if lag != 1 {
		t.Errorf("the partitions' lake lag sums to %d offsets, want 1 (id 8)", lag)
	}
	plan, rows := scanRows(t, e, protocol.ScanRequest{Table: "events$lake"})
	if got := idsByPartition(rows); !reflect.DeepEqual(got, want) || plan.LakeSnapshotID == nil || *plan.LakeSnapshotID != snap.SnapshotID {
		t.Errorf("events$lake of snapshot %v reads %v, want %v of %d", plan.LakeSnapshotID, got, want, snap.SnapshotID)
	}
	_, rows = scanRows(t, e, protocol.ScanRequest{Table: "events"})
	union := map[string][]int64{"20261201": {1, 3, 5}, "20261202": {2, 6, 8}, "20261203": {4}}
	if got := idsByPartition(rows); !reflect.DeepEqual(got, union) {
		t.Errorf("the union read reads %v, want %v", got, union)
	}
	// A filter on the partition column plans one partition and opens only
	// its lake files.
	lt := lakeTableOf(t, e, "events")
	files, _ := lt.ScanStats()
	for _, table := range []string{"events$lake", "events"} {
		plan, rows := scanRows(t, e, protocol.ScanRequest{Table: table, Filter: []byte(`{"eq": ["dt", "20261203"]}`)})
		if got := idsByPartition(rows); len(plan.Partitions) != 1 || !reflect.DeepEqual(got, map[string][]int64{"20261203": {4}}) {
			t.Errorf("%s filtered to 20261203: %d partitions planned, rows %v", table, len(plan.Partitions), got)
		}
	}
	if opened, _ := lt.ScanStats(); opened-files != 2 {
		t.Errorf("the two filtered reads opened %d lake files, want 2 (one each: 20261203's only file)", opened-files)
	}

	if err := e.DropPartition(t.Context(), "events", map[string]string{"dt": "20261201"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{7}, []string{"20261203"})); err != nil {
		t.Fatal(err)
	}
	snap, err = e.TierNow(t.Context(), "events")
	if err != nil {
		t.Fatal(err)
	}
	if wantSums := map[string]int64{"20261202": 3, "20261203": 2}; !reflect.DeepEqual(offsetsSum(snap.PartitionOffsets), wantSums) {
		t.Errorf("after the drop: partition offsets %v, want sums %v", snap.PartitionOffsets, wantSums)
	}
	want["20261202"], want["20261203"] = []int64{2, 6, 8}, []int64{4, 7}
	if got := lakeIDs(t, e, "events"); !reflect.DeepEqual(got, want) {
		t.Errorf("after the drop the lake holds %v, want %v (the dropped day's rows stay)", got, want)
	}

	checkLakeOnly(t, e, want)

	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openPartitioned(t, dir, Options{})
	checkLakeOnly(t, e, want)
	if got, err := e.LakeSnapshot(t.Context(), "events"); err != nil || !reflect.DeepEqual(got, snap) {
		t.Errorf("after restart lake-snapshot %+v (%v), want %+v", got, err, snap)
	}
	if got := lakeIDs(t, e, "events"); !reflect.DeepEqual(got, want) {
		t.Errorf("after restart the lake holds %v, want %v", got, want)
	}
	// Nothing new: the round commits nothing.
	if again, err := e.TierNow(t.Context(), "events"); err != nil || again.SnapshotID != snap.SnapshotID {
		t.Errorf("a round with nothing new: snapshot %d (%v), want %d", again.SnapshotID, err, snap.SnapshotID)
	}
}

// A primary-key table partitioned by region: each round folds each
// partition's upserts and deletes, and $lake equals the table's rows.
func TestPartitionedPrimaryKeyTiering(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	no := false
	spec := protocol.TableSpec{Table: "users",
		Columns:       []protocol.Column{{Name: "id", Type: "BIGINT", Nullable: &no}, {Name: "dt", Type: "STRING", Nullable: &no}},
		PrimaryKey:    []string{"id", "dt"},
		PartitionKeys: []string{"dt"},
		Options:       map[string]string{"bucket.num": "2", "table.datalake.enabled": "true"},
	}
	if _, err := e.CreateTable(t.Context(), spec, false); err != nil {
		t.Fatal(err)
	}
	write := func(mode string, ids []int64, days []string) {
		t.Helper()
		if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "users", Mode: mode}, eventRows(ids, days)); err != nil {
			t.Fatal(err)
		}
	}
	write("", []int64{1, 2, 3, 1}, []string{"eu", "eu", "us", "us"})
	if _, err := e.TierNow(t.Context(), "users"); err != nil {
		t.Fatal(err)
	}
	write("", []int64{2, 4}, []string{"eu", "us"})
	write(protocol.ModeDelete, []int64{1}, []string{"eu"})
	if _, err := e.TierNow(t.Context(), "users"); err != nil {
		t.Fatal(err)
	}
	_, rows := scanRows(t, e, protocol.ScanRequest{Table: "users$lake"})
	want := map[string][]int64{"eu": {2}, "us": {1, 3, 4}}
	if got := idsByPartition(rows); !reflect.DeepEqual(got, want) {
		t.Errorf("users$lake reads %v, want %v", got, want)
	}
	_, rows = scanRows(t, e, protocol.ScanRequest{Table: "users"})
	if got := idsByPartition(rows); !reflect.DeepEqual(got, want) {
		t.Errorf("users reads %v, want the same as its lake, %v", got, want)
	}
}

// Log retention of a partition removes only what its partition's lake
// offsets hold; the union read stays complete from the lake.
func TestPartitionRetentionKeepsWhatTheLakeLacks(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	e := openPartitioned(t, t.TempDir(), Options{Log: LogOptions{SegmentBytes: 4 << 10, Now: clock}})
	defer e.Close()
	spec := lakeEventsSpec()
	spec.Options["table.log.ttl"] = "1h"
	if _, err := e.CreateTable(t.Context(), spec, false); err != nil {
		t.Fatal(err)
	}
	days := []string{"20261201", "20261202"}
	next := int64(0)
	writeDays := func(batches int) {
		t.Helper()
		for range batches {
			ids, dts := make([]int64, 40), make([]string, 40)
			for i := range ids {
				ids[i], dts[i] = next, days[i%2]
				next++
			}
			if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows(ids, dts)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// earliest sums the partitions' earliest retained offsets.
	earliest := func() int64 {
		t.Helper()
		info, _ := e.cat.Table(protocol.TablePath{Database: "fluss", Table: "events"})
		var sum int64
		for _, p := range e.cat.Partitions(info.TableID) {
			pt, err := e.tables.ByID(p.PartitionID)
			if err != nil {
				t.Fatal(err)
			}
			for b := range pt.Log.Buckets() {
				sum += pt.Log.EarliestOffset(b)
			}
		}
		return sum
	}
	writeDays(20)
	now.Add(int64(2 * time.Hour))
	e.ExpireLogs(t.Context())
	if got := earliest(); got != 0 {
		t.Fatalf("retention removed untiered segments: earliest offsets sum to %d", got)
	}
	if _, err := e.TierNow(t.Context(), "events"); err != nil {
		t.Fatal(err)
	}
	writeDays(2)
	now.Add(int64(2 * time.Hour))
	e.ExpireLogs(t.Context())
	if got := earliest(); got == 0 {
		t.Fatal("retention removed nothing once tiered")
	}
	_, rows := scanRows(t, e, protocol.ScanRequest{Table: "events"})
	var n int
	for _, ids := range rows {
		n += len(ids)
	}
	if n != int(next) {
		t.Errorf("the union read after retention reads %d rows, want %d", n, next)
	}
}

// A column added to a partitioned lake table reaches its one Iceberg table;
// rows tiered before read it as NULL, in every partition.
func TestPartitionedLakeAddColumn(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), lakeEventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{1, 2}, []string{"20261201", "20261202"})); err != nil {
		t.Fatal(err)
	}
	if _, err := e.TierNow(t.Context(), "events"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AlterTable(t.Context(), "events", nil, nil, []protocol.Column{{Name: "note", Type: "STRING"}}); err != nil {
		t.Fatal(err)
	}
	schema := arrow.NewSchema(append(eventsSchema.Fields(), arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
	b := array.NewRecordBuilder(memtest.Allocator(t), schema)
	b.Field(0).(*array.Int64Builder).Append(3)
	b.Field(1).(*array.StringBuilder).Append("20261203")
	b.Field(2).(*array.StringBuilder).Append("new")
	rec := b.NewRecordBatch()
	b.Release()
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := e.TierNow(t.Context(), "events"); err != nil {
		t.Fatal(err)
	}
	plan, err := e.PlanScan(t.Context(), protocol.ScanRequest{Table: "events$lake", Columns: []string{"id", "note"}})
	if err != nil {
		t.Fatal(err)
	}
	notes := map[int64]string{}
	for _, tk := range plan.Tickets {
		rs, err := e.OpenRead(tk)
		if err != nil {
			t.Fatal(err)
		}
		err = rs.Run(t.Context(), func(rec arrow.RecordBatch, _ protocol.BatchMeta) error {
			ids, note := rec.Column(0).(*array.Int64), rec.Column(1).(*array.String)
			for i := range ids.Len() {
				notes[ids.Value(i)] = note.ValueStr(i)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := map[int64]string{1: "(null)", 2: "(null)", 3: "new"}; !reflect.DeepEqual(notes, want) {
		t.Errorf("events$lake notes %v, want %v", notes, want)
	}
}
