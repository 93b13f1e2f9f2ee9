package tiering

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/lake"
)

// partitionedLake is a lake table of (k BIGINT, v STRING) partitioned by v,
// and a one-bucket log per partition, each holding rows whose v is the
// partition's name.
type partitionedLake struct {
	lt    *lake.Table
	mem   memory.Allocator
	parts []Partition
	logs  map[string]*fakeLog
}

func newPartitionedLake(t *testing.T, pk bool, names ...string) *partitionedLake {
	t.Helper()
	no := false
	spec := catalog.TableSpec{Table: "fluss.p", Columns: []catalog.Column{{Name: "k", Type: "BIGINT", Nullable: &no}, {Name: "v", Type: "STRING", Nullable: &no}},
		Options: map[string]string{"bucket.num": "1"}}
	if pk {
		spec.PrimaryKey = []string{"k", "v"}
	}
	spec.PartitionKeys = []string{"v"}
	info, err := catalog.NormalizeSpec(spec, catalog.Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	info.TableID = 2
	l, err := lake.Open(context.Background(), lake.Options{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	lt, err := l.Ensure(context.Background(), info)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	p := &partitionedLake{lt: lt, mem: mem, logs: map[string]*fakeLog{}}
	for i, name := range names {
		f := &fakeLog{mem: mem, schema: info.ArrowSchema()}
		if pk {
			f.pk = info.PrimaryKeyIndexes()
		}
		p.logs[name] = f
		p.parts = append(p.parts, Partition{ID: int64(100 + i), Name: name, Source: f})
	}
	t.Cleanup(func() {
		for _, f := range p.logs {
			for _, b := range f.batches {
				b.Rec.Release()
			}
		}
		mem.AssertSize(t, 0)
	})
	return p
}

func (p *partitionedLake) round(t *testing.T) Result {
	t.Helper()
	res, err := RoundPartitions(context.Background(), p.lt, p.parts, p.mem)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// rows reads one partition of the snapshot as sorted "k=v@offset" lines.
func (p *partitionedLake) rows(t *testing.T, snap *lake.Snapshot, name string) []string {
	t.Helper()
	return partitionRows(t, p.lt, p.mem, snap, lake.Partition{name})
}

func offsetsOf(parts map[int64]lake.PartitionOffsets) map[string]int64 {
	out := map[string]int64{}
	for id, p := range parts {
		out[fmt.Sprintf("%d/%s", id, p.Name)] = p.Buckets[0]
	}
	return out
}

// A round tiers every partition into one snapshot, each partition's rows
// into its own Iceberg partition with its own offsets; a dropped
// partition's offsets leave the snapshot and its rows stay.
func TestLogRoundsPerPartition(t *testing.T) {
	p := newPartitionedLake(t, false, "d1", "d2", "d3")
	p.logs["d1"].append(change{k: 1, v: "d1"}, change{k: 2, v: "d1"})
	p.logs["d2"].append(change{k: 3, v: "d2"})
	res := p.round(t)
	if want := map[string]int64{"100/d1": 2, "101/d2": 1}; !res.Committed || !reflect.DeepEqual(offsetsOf(res.Snapshot.Partitions), want) {
		t.Fatalf("round 1: committed %v, offsets %v; want %v", res.Committed, offsetsOf(res.Snapshot.Partitions), want)
	}
	want(t, p.rows(t, res.Snapshot, "d1"), "1=d1@0", "2=d1@1")
	want(t, p.rows(t, res.Snapshot, "d2"), "3=d2@0")
	want(t, p.rows(t, res.Snapshot, "d3"))

	if res := p.round(t); res.Committed {
		t.Errorf("a round with nothing new committed snapshot %d", res.Snapshot.ID)
	}

	// d1 is dropped from fluxgate; d3 gets its first rows.
	p.logs["d3"].append(change{k: 4, v: "d3"})
	p.parts = p.parts[1:]
	res = p.round(t)
	if want := map[string]int64{"101/d2": 1, "102/d3": 1}; !reflect.DeepEqual(offsetsOf(res.Snapshot.Partitions), want) {
		t.Errorf("round 3: offsets %v, want %v", offsetsOf(res.Snapshot.Partitions), want)
	}
	want(t, p.rows(t, res.Snapshot, "d1"), "1=d1@0", "2=d1@1")
	want(t, p.rows(t, res.Snapshot, "d3"), "4=d3@0")
}

// A primary-key table's round folds each partition's changes on its own.
func TestPrimaryKeyRoundsPerPartition(t *testing.T) {
	p := newPartitionedLake(t, true, "eu", "us")
	p.logs["eu"].append(change{kind: 1, k: 1, v: "eu"}, change{kind: 1, k: 2, v: "eu"})
	p.logs["us"].append(change{kind: 1, k: 1, v: "us"})
	p.round(t)
	// eu: key 1 updated (same row values, new offsets), key 2 deleted; us untouched.
	p.logs["eu"].append(change{kind: 2, k: 1, v: "eu"}, change{kind: 3, k: 1, v: "eu"}, change{kind: 4, k: 2, v: "eu"})
	res := p.round(t)
	if want := map[string]int64{"100/eu": 5, "101/us": 1}; !reflect.DeepEqual(offsetsOf(res.Snapshot.Partitions), want) {
		t.Errorf("offsets %v, want %v", offsetsOf(res.Snapshot.Partitions), want)
	}
	want(t, p.rows(t, res.Snapshot, "eu"), "1=eu@3")
	want(t, p.rows(t, res.Snapshot, "us"), "1=us@0")
}
