package tiering

import (
	"reflect"
	"testing"
)

// A partition listed without a Source (its data unavailable) is held: the
// round tiers the others and keeps its offsets, also when it comes first
// (the round tells a primary-key table by a partition it reads), and once
// it can be read again it is tiered from them.
func TestHeldPartitionKeepsItsOffsets(t *testing.T) {
	p := newPartitionedLake(t, true, "eu", "us")
	p.logs["eu"].append(change{kind: 1, k: 1, v: "eu"})
	p.logs["us"].append(change{kind: 1, k: 1, v: "us"})
	p.round(t)
	p.logs["eu"].append(change{kind: 1, k: 2, v: "eu"})
	p.logs["us"].append(change{kind: 1, k: 2, v: "us"})

	eu := p.parts[0].Source
	p.parts[0].Source = nil
	res := p.round(t)
	if want := map[string]int64{"100/eu": 1, "101/us": 2}; res.Held != 1 || !reflect.DeepEqual(offsetsOf(res.Snapshot.Partitions), want) {
		t.Errorf("eu held: held %d, offsets %v; want 1, %v", res.Held, offsetsOf(res.Snapshot.Partitions), want)
	}
	want(t, p.rows(t, res.Snapshot, "eu"), "1=eu@0")
	want(t, p.rows(t, res.Snapshot, "us"), "1=us@0", "2=us@1")

	p.parts[0].Source = eu
	res = p.round(t)
	if want := map[string]int64{"100/eu": 2, "101/us": 2}; res.Held != 0 || !reflect.DeepEqual(offsetsOf(res.Snapshot.Partitions), want) {
		t.Errorf("eu back: held %d, offsets %v; want 0, %v", res.Held, offsetsOf(res.Snapshot.Partitions), want)
	}
	want(t, p.rows(t, res.Snapshot, "eu"), "1=eu@0", "2=eu@1")
}
