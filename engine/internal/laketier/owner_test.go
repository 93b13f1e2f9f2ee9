package laketier

import (
	"reflect"
	"testing"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/catalog/catalogtest"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// partitioned creates a partitioned table with the partition day=20261201
// and returns the table's definition and the partition's.
func partitioned(t *testing.T) (table, part *catalog.TableInfo) {
	t.Helper()
	cat := catalogtest.Open(t)
	info := catalogtest.Table(t, cat, catalog.TableSpec{Table: "events",
		Columns:       []catalog.Column{{Name: "id", Type: "BIGINT"}, {Name: "day", Type: "STRING"}},
		PartitionKeys: []string{"day"}})
	p, _, err := cat.CreatePartition(info.Path(), map[string]string{"day": "20261201"}, false)
	if err != nil {
		t.Fatal(err)
	}
	return info, info.ForPartition(p)
}

// A partitioned table and its partitions share one round lock, made on the
// table's first use: before it, a drop has no round to wait for; after it
// was forgotten (the table dropped), none either.
func TestRoundOfPartitionedTable(t *testing.T) {
	info, part := partitioned(t)
	l := New(Env{})
	if l.roundOf(info) != nil || l.roundOf(part) != nil {
		t.Fatal("a round lock before the partitioned table's tier was made")
	}
	round := l.Partitioned(info.TableID).tier.round
	if l.roundOf(info) != round || l.roundOf(part) != round {
		t.Error("the table and its partition do not share the partitioned table's round lock")
	}
	l.tiers.forget(info.TableID)
	if l.roundOf(part) != nil {
		t.Error("a round lock of a forgotten partitioned table")
	}
}

// A snapshot's offsets of a partition are its partition's, and the answers
// give a partitioned table's offsets by partition name.
func TestSnapshotOffsetsByPartition(t *testing.T) {
	info, part := partitioned(t)
	id := part.Partition().PartitionID
	snap := &lake.Snapshot{ID: 7, CommittedAt: 1, Partitions: map[int64]lake.PartitionOffsets{
		id: {Name: "20261201", Buckets: map[int]int64{0: 3}}}}
	if got := Offsets(snap, part); !reflect.DeepEqual(got, map[int]int64{0: 3}) {
		t.Errorf("the partition's offsets %v, want {0: 3}", got)
	}
	if got := Offsets(snap, info); got != nil {
		t.Errorf("a partitioned table's own offsets %v, want none", got)
	}
	want := protocol.LakeSnapshot{SnapshotID: 7, CommittedAt: 1, PartitionOffsets: protocol.PartitionOffsets{"20261201": {0: 3}}}
	if got := SnapshotOf(snap); !reflect.DeepEqual(got, want) {
		t.Errorf("SnapshotOf %+v, want %+v", got, want)
	}
}
