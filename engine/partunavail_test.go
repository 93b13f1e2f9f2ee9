package engine

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fluxgate-io/fluxgate/engine/internal/datadir"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A partition whose data is unavailable (here: in quarantine) neither stops
// its table's tiering nor its alters: rounds tier the other partitions and
// keep its lake offsets, an alter changes the table and the open
// partitions, and once its data is back it opens under the altered
// definition and is tiered from where its offsets stayed, nothing skipped
// or tiered twice.
func TestUnavailablePartitionLeavesTheOthersTiering(t *testing.T) {
	dir := t.TempDir()
	e := openPartitioned(t, dir, Options{})
	defer func() { e.Close() }()
	if _, err := e.CreateTable(t.Context(), lakeEventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	days := []string{"20261201", "20261202", "20261203"}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{1, 2, 3}, days)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.TierNow(t.Context(), "events"); err != nil {
		t.Fatal(err)
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{4, 5, 6}, days)); err != nil {
		t.Fatal(err)
	}
	_, lost := catalogPartition(t, e, "events", "20261201")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	data := e.tableDir(lost.PartitionID)
	q := filepath.Join(dir, QuarantineDir, "20260101T000000Z-"+filepath.Base(data))
	if err := datadir.Move(data, q); err != nil {
		t.Fatal(err)
	}

	e = openPartitioned(t, dir, Options{})
	if _, err := e.tables.ByID(lost.PartitionID); errs.KindOf(err) != errs.DataLoss {
		t.Fatalf("the quarantined partition: %v, want DATA_LOSS", err)
	}
	o, info, _, err := e.lakes.Resolve("events")
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.lakes.Round(t.Context(), o)
	if err != nil {
		t.Fatalf("a round with one partition unavailable: %v, want the others tiered", err)
	}
	if res.Held != 1 {
		t.Errorf("the round held %d partitions, want 1", res.Held)
	}
	snap, err := e.LakeSnapshot(t.Context(), "events")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"20261201": 1, "20261202": 2, "20261203": 2}; !reflect.DeepEqual(offsetsSum(snap.PartitionOffsets), want) {
		t.Errorf("partition offsets %v, want sums %v (the unavailable one's kept)", snap.PartitionOffsets, want)
	}

	if _, err := e.AlterTable(t.Context(), "events", map[string]string{"table.datalake.freshness": "30s"}, nil, []protocol.Column{{Name: "note", Type: "STRING"}}); err != nil {
		t.Fatalf("alter with one partition unavailable: %v", err)
	}
	if _, err := e.TierNow(t.Context(), "events"); err != nil {
		t.Fatalf("a round after the alter: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := datadir.Move(q, data); err != nil {
		t.Fatal(err)
	}

	e = openPartitioned(t, dir, Options{})
	pt, err := e.tables.ByID(lost.PartitionID)
	if err != nil {
		t.Fatalf("the partition with its data back: %v", err)
	}
	if got, want := pt.Current().Info.SchemaID, info.SchemaID+1; got != want {
		t.Errorf("the partition back opens at schema %d, want the altered table's %d", got, want)
	}
	snap, err = e.TierNow(t.Context(), "events")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"20261201": 2, "20261202": 2, "20261203": 2}; !reflect.DeepEqual(offsetsSum(snap.PartitionOffsets), want) {
		t.Errorf("partition offsets %v, want sums %v", snap.PartitionOffsets, want)
	}
	want := map[string][]int64{"20261201": {1, 4}, "20261202": {2, 5}, "20261203": {3, 6}}
	if got := lakeIDs(t, e, "events"); !reflect.DeepEqual(got, want) {
		t.Errorf("the lake holds %v, want %v: each row once", got, want)
	}
}
