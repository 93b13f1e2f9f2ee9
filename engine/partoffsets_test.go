package engine

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// list-offsets of t$changelog on a partitioned table answers per partition,
// as of t: the changelog view reads the partitions' logs.
func TestPartitionedChangelogOffsets(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	createOrders(t, e)
	// An insert then an update: the changelog has more records than rows.
	for _, amt := range []int64{1, 2} {
		if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "orders"},
			orderRows([]int64{1, 2, 3, 1}, []string{"eu", "eu", "eu", "us"}, []int64{amt, amt, amt, amt})); err != nil {
			t.Fatal(err)
		}
	}
	earliest, _ := json.Marshal("earliest")
	for _, req := range []protocol.OffsetsRequest{{}, {At: earliest}, {Partitions: []string{"us"}}} {
		req.Table = "orders"
		want, err := e.ListOffsets(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		req.Table = "orders$changelog"
		got, err := e.ListOffsets(t.Context(), req)
		if err != nil {
			t.Fatalf("list-offsets %+v: %v", req, err)
		}
		if got.Offsets != nil || len(got.PartitionOffsets) != len(want.PartitionOffsets) || len(got.PartitionOffsets) == 0 {
			t.Fatalf("list-offsets %+v: %+v, want %+v", req, got, want)
		}
		for name, w := range want.PartitionOffsets {
			if !maps.Equal(got.PartitionOffsets[name], w) {
				t.Errorf("list-offsets %+v: partition %s: %v, want %v", req, name, got.PartitionOffsets[name], w)
			}
		}
	}
	latest, err := e.ListOffsets(t.Context(), protocol.OffsetsRequest{Table: "orders$changelog"})
	if err != nil {
		t.Fatal(err)
	}
	var eu int64
	for _, end := range latest.PartitionOffsets["eu"] {
		eu += end
	}
	// 3 inserts, then 3 updates of two records each (update_before, update_after).
	if eu != 9 {
		t.Errorf("latest changelog offsets of eu sum to %d, want 9 records: %v", eu, latest.PartitionOffsets["eu"])
	}
}

// A producer starting on a partitioned table without partitions registers
// that: no partition offsets, which a retry then gets back.
func TestRegisterProducerOffsetsOfNoPartitions(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), eventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	reg := protocol.ProducerOffsetsRequest{ProducerID: "p", Table: "events", PartitionOffsets: protocol.RawPartitionOffsets{}}
	if r, err := e.RegisterProducerOffsets(t.Context(), reg); err != nil || r.Result != protocol.RegisterCreated {
		t.Fatalf("register no partitions: %+v %v", r, err)
	}
	if r, err := e.RegisterProducerOffsets(t.Context(), reg); err != nil || r.Result != protocol.RegisterAlreadyExists {
		t.Fatalf("register again: %+v %v", r, err)
	}
	got, err := e.GetProducerOffsets(t.Context(), protocol.ProducerOffsetsRequest{ProducerID: "p", Table: "events"})
	if err != nil || got.Offsets != nil || len(got.PartitionOffsets) != 0 {
		t.Errorf("get: %+v %v", got, err)
	}
	reg.PartitionOffsets = nil
	if _, err := e.RegisterProducerOffsets(t.Context(), reg); err == nil {
		t.Error("register without partition_offsets: no error")
	}
}
