package engine

import (
	"reflect"
	"testing"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// A partition is in the catalog a moment before it is open. A tiering round
// in that moment leaves it out (it has no rows yet) instead of failing on
// it, and the next round tiers it.
func TestTieringRoundDuringPartitionCreation(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), lakeEventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{1}, []string{"20261201"})); err != nil {
		t.Fatal(err)
	}
	listed, release := make(chan struct{}), make(chan struct{})
	e.tables.PartitionListed = func() {
		close(listed)
		<-release
	}
	created := make(chan error, 1)
	go func() {
		_, err := e.CreatePartition(t.Context(), "events", map[string]string{"dt": "20261202"}, false)
		created <- err
	}()
	<-listed
	snap, err := e.TierNow(t.Context(), "events")
	close(release)
	if err != nil {
		t.Fatalf("a round while a partition is being created: %v", err)
	}
	if want := map[string]int64{"20261201": 1}; !reflect.DeepEqual(offsetsSum(snap.PartitionOffsets), want) {
		t.Errorf("partition offsets %v, want sums %v", snap.PartitionOffsets, want)
	}
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	e.tables.PartitionListed = nil

	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{2}, []string{"20261202"})); err != nil {
		t.Fatal(err)
	}
	snap, err = e.TierNow(t.Context(), "events")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"20261201": 1, "20261202": 1}; !reflect.DeepEqual(offsetsSum(snap.PartitionOffsets), want) {
		t.Errorf("partition offsets %v, want sums %v", snap.PartitionOffsets, want)
	}
}
