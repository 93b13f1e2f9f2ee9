package engine

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// A drop of a primary-key partition cut short after its catalog change (the
// process died there) loses nothing and mixes nothing: on the next start its
// log directory is in quarantine and its primary-key state stays in kv/ (the
// state of an id the catalog does not name may be all that is left of a
// table whose catalog entry was lost). Its id is not handed out again, so
// the partition created again under its name starts empty.
func TestUnfinishedPartitionDropKeepsItsData(t *testing.T) {
	dir := t.TempDir()
	e := openPartitioned(t, dir, Options{})
	createOrders(t, e)
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "orders"}, orderRows([]int64{1, 2, 3}, []string{"eu", "eu", "us"}, []int64{10, 20, 30})); err != nil {
		t.Fatal(err)
	}
	path := protocol.TablePath{Database: "fluss", Table: "orders"}
	info, err := e.cat.Table(path)
	if err != nil {
		t.Fatal(err)
	}
	// DropPartition's first step, and no more: the catalog forgets eu.
	old, err := e.cat.DropPartition(path, map[string]string{"region": "eu"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = openPartitioned(t, dir, Options{})
	defer e.Close()
	if _, err := os.Stat(e.tableDir(old.PartitionID)); !os.IsNotExist(err) {
		t.Errorf("the dropped partition's log directory is still in tables/ (%v)", err)
	}
	quarantined, err := filepath.Glob(filepath.Join(dir, QuarantineDir, "*-"+filepath.Base(e.tableDir(old.PartitionID)), "*"))
	if err != nil || len(quarantined) == 0 {
		t.Errorf("the dropped partition's log directory in quarantine holds %v (%v), want its buckets", quarantined, err)
	}
	if got := stateRows(t, e, old.PartitionID, info.BucketCount()); got != 2 {
		t.Errorf("the dropped partition's primary-key state holds %d rows, want its 2 kept", got)
	}

	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "orders"}, orderRows([]int64{1}, []string{"eu"}, []int64{11})); err != nil {
		t.Fatal(err)
	}
	again, err := e.cat.PartitionByName(info, "eu")
	if err != nil {
		t.Fatal(err)
	}
	if again.PartitionID <= old.PartitionID {
		t.Errorf("eu created again with id %d, want above the dropped one's %d", again.PartitionID, old.PartitionID)
	}
	if got, want := amounts(t, e), map[string]int64{"eu/1": 11, "us/3": 30}; !reflect.DeepEqual(got, want) {
		t.Errorf("orders read %v, want %v: the dropped partition's rows not among them", got, want)
	}
}

// stateRows counts the rows of a table id's primary-key state.
func stateRows(t *testing.T, e *Engine, id int64, buckets int) int {
	t.Helper()
	snap := e.kv.Snapshot()
	defer snap.Close()
	n := 0
	for b := range buckets {
		if err := snap.Rows(id, b, func(_, _ []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	return n
}
