package engine

import (
	"os"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// A drop waits for a tiering round in progress before the partition's log
// goes, and that wait does not stall creating partitions: while a round is
// held before its commit, a partition of another day, and one under the
// dropped partition's name (with a new id), are created before the drop
// returns. The round then commits what it read, the drop removes the data,
// and the next round forgets the dropped partition.
func TestDropPartitionWaitsForTheRoundWithoutStallingCreation(t *testing.T) {
	var hold atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	opts := Options{Lake: LakeOptions{BeforeCommit: func() error {
		if hold.CompareAndSwap(true, false) {
			close(entered)
			<-release
		}
		return nil
	}}}
	e := openPartitioned(t, t.TempDir(), opts)
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), lakeEventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{1, 2, 3}, []string{"20261201", "20261202", "20261201"})); err != nil {
		t.Fatal(err)
	}
	info, err := e.cat.Table(protocol.TablePath{Database: "fluss", Table: "events"})
	if err != nil {
		t.Fatal(err)
	}
	old, err := e.cat.PartitionByName(info, "20261201")
	if err != nil {
		t.Fatal(err)
	}

	hold.Store(true)
	rounded := make(chan error, 1)
	go func() {
		_, err := e.TierNow(t.Context(), "events")
		rounded <- err
	}()
	<-entered
	dropped := make(chan error, 1)
	go func() {
		dropped <- e.DropPartition(t.Context(), "events", map[string]string{"dt": "20261201"}, false)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := e.cat.PartitionByName(info, "20261201"); err != nil {
			break // the drop is in the catalog
		}
		if time.Now().After(deadline) {
			t.Fatal("the drop did not reach the catalog")
		}
		time.Sleep(time.Millisecond)
	}

	created := make(chan error, 1)
	var again *protocol.PartitionInfo
	go func() {
		if _, err := e.CreatePartition(t.Context(), "events", map[string]string{"dt": "20261203"}, false); err != nil {
			created <- err
			return
		}
		p, err := e.CreatePartition(t.Context(), "events", map[string]string{"dt": "20261201"}, false)
		again = &p
		created <- err
	}()
	select {
	case err := <-created:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("creating partitions waits for the tiering round a drop waits for")
	}
	if again.PartitionID == old.PartitionID {
		t.Errorf("the dropped partition's name was created again with its old id %d", old.PartitionID)
	}
	select {
	case err := <-dropped:
		t.Fatalf("the drop returned (%v) before the round it must wait for", err)
	default:
	}

	released = true
	close(release)
	if err := <-rounded; err != nil {
		t.Fatalf("the round the drop waited for: %v", err)
	}
	if err := <-dropped; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.tableDir(old.PartitionID)); !os.IsNotExist(err) {
		t.Errorf("the dropped partition's data is still there (%v)", err)
	}
	snap, err := e.TierNow(t.Context(), "events")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"20261202": 1}; !reflect.DeepEqual(offsetsSum(snap.PartitionOffsets), want) {
		t.Errorf("partition offsets %v, want sums %v (the dropped partition forgotten)", snap.PartitionOffsets, want)
	}
	if got, want := lakeIDs(t, e, "events"), map[string][]int64{"20261201": {1, 3}, "20261202": {2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the lake holds %v, want %v (the dropped partition's rows stay)", got, want)
	}
}
