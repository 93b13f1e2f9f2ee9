package engine

import (
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxgate-io/fluxgate/internal/testwait"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// roundHold holds the next tiering round, once armed, before its commit
// (lake.Options.BeforeCommit) until it is freed. bg is the tests' work in
// the background, which ends before the engine closes, also when a test
// fails holding the round.
type roundHold struct {
	armed            atomic.Bool
	entered, release chan struct{}
	freeOnce         sync.Once
	bg               sync.WaitGroup
}

func newRoundHold() *roundHold {
	return &roundHold{entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *roundHold) beforeCommit() error {
	if h.armed.CompareAndSwap(true, false) {
		close(h.entered)
		<-h.release
	}
	return nil
}

func (h *roundHold) free() { h.freeOnce.Do(func() { close(h.release) }) }

// freeAndWait frees the round and waits for the background work.
func (h *roundHold) freeAndWait() {
	h.free()
	h.bg.Wait()
}

// tierHeld runs a round of table in the background, held before its
// commit, and returns its result to come once h is freed.
func tierHeld(t *testing.T, e *Engine, h *roundHold, table string) <-chan error {
	t.Helper()
	h.armed.Store(true)
	done := make(chan error, 1)
	h.bg.Go(func() {
		_, err := e.TierNow(t.Context(), table)
		done <- err
	})
	<-h.entered
	return done
}

// dropAfterRound checks that a drop has not returned while the round is
// held, then frees the round and fails the test if the round or the drop
// fails.
func dropAfterRound(t *testing.T, h *roundHold, rounded, dropped <-chan error) {
	t.Helper()
	select {
	case err := <-dropped:
		t.Fatalf("the drop returned (%v) before the round it must wait for", err)
	default:
	}
	h.free()
	if err := <-rounded; err != nil {
		t.Fatalf("the round the drop waited for: %v", err)
	}
	if err := <-dropped; err != nil {
		t.Fatal(err)
	}
}

// createWithin creates partitions of events by the specs, in order, failing
// the test if that takes more than 10 s (a wait for a held round would not
// end), and returns the last one.
func createWithin(t *testing.T, e *Engine, h *roundHold, specs ...map[string]string) protocol.PartitionInfo {
	t.Helper()
	type created struct {
		p   protocol.PartitionInfo
		err error
	}
	done := make(chan created, 1)
	h.bg.Go(func() {
		var c created
		for _, spec := range specs {
			if c.p, c.err = e.CreatePartition(t.Context(), "events", spec, false); c.err != nil {
				break
			}
		}
		done <- c
	})
	select {
	case c := <-done:
		if c.err != nil {
			t.Fatal(c.err)
		}
		return c.p
	case <-time.After(10 * time.Second):
		t.Fatal("creating partitions waits for the tiering round a drop waits for")
	}
	return protocol.PartitionInfo{}
}

// A drop waits for a tiering round in progress before the partition's log
// goes, and that wait does not stall creating partitions: while a round is
// held before its commit, a partition of another day, and one under the
// dropped partition's name (with a new id), are created before the drop
// returns. The round then commits what it read, the drop removes the data,
// and the next round forgets the dropped partition.
func TestDropPartitionWaitsForTheRoundWithoutStallingCreation(t *testing.T) {
	h := newRoundHold()
	e := openPartitioned(t, t.TempDir(), Options{Lake: LakeOptions{BeforeCommit: h.beforeCommit}})
	defer e.Close()
	defer h.freeAndWait() // before the close
	if _, err := e.CreateTable(t.Context(), lakeEventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{1, 2, 3}, []string{"20261201", "20261202", "20261201"})); err != nil {
		t.Fatal(err)
	}
	info, old := catalogPartition(t, e, "events", "20261201")

	rounded := tierHeld(t, e, h, "events")
	dropped := make(chan error, 1)
	h.bg.Go(func() {
		dropped <- e.DropPartition(t.Context(), "events", map[string]string{"dt": "20261201"}, false)
	})
	testwait.For(t, "the drop in the catalog", func() bool {
		_, err := e.cat.PartitionByName(info, "20261201")
		return err != nil
	})
	again := createWithin(t, e, h, map[string]string{"dt": "20261203"}, map[string]string{"dt": "20261201"})
	if again.PartitionID == old.PartitionID {
		t.Errorf("the dropped partition's name was created again with its old id %d", old.PartitionID)
	}
	dropAfterRound(t, h, rounded, dropped)
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

// Dropping a table waits for its round likewise, and neither stalls
// creating partitions of other tables.
func TestDropTableWaitsForTheRoundWithoutStallingCreation(t *testing.T) {
	h := newRoundHold()
	e := openPartitioned(t, t.TempDir(), Options{Lake: LakeOptions{BeforeCommit: h.beforeCommit}})
	defer e.Close()
	defer h.freeAndWait() // before the close
	other := lakeEventsSpec()
	other.Table = "other"
	for _, spec := range []protocol.TableSpec{lakeEventsSpec(), other} {
		if _, err := e.CreateTable(t.Context(), spec, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "other"}, eventRows([]int64{1}, []string{"20261201"})); err != nil {
		t.Fatal(err)
	}

	rounded := tierHeld(t, e, h, "other")
	dropped := make(chan error, 1)
	h.bg.Go(func() { dropped <- e.DropTable(t.Context(), "other", false) })
	testwait.For(t, "the drop in the catalog", func() bool {
		_, err := e.cat.Table(protocol.TablePath{Database: "fluss", Table: "other"})
		return err != nil
	})
	createWithin(t, e, h, map[string]string{"dt": "20261201"})
	dropAfterRound(t, h, rounded, dropped)
}
