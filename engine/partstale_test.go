package engine

import (
	"testing"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A write stream opened before an alter creates its new partitions under the
// table's current definition, not the one it opened with.
func TestPartitionCreatedAfterAlterTakesTheCurrentSchema(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), eventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	ws, err := e.OpenWrite(protocol.WriteRequest{Table: "events"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.AlterTable(t.Context(), "events", map[string]string{"table.log.ttl": "1h"}, nil,
		[]protocol.Column{{Name: "extra", Type: "STRING"}}); err != nil {
		t.Fatal(err)
	}
	rec := eventRows([]int64{1}, []string{"20260101"})
	defer rec.Release()
	if _, err := ws.Write(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	info, p := catalogPartition(t, e, "events", "20260101")
	pt, err := e.tables.ByID(p.PartitionID)
	if err != nil {
		t.Fatal(err)
	}
	got := pt.Current().Info
	if got.SchemaID != info.SchemaID || len(got.Columns) != len(info.Columns) || got.LogTTL() != info.LogTTL() {
		t.Fatalf("partition opened at schema %d with %d columns and ttl %v; the table is at %d, %d, %v",
			got.SchemaID, len(got.Columns), got.LogTTL(), info.SchemaID, len(info.Columns), info.LogTTL())
	}
}

// A write stream of a dropped table creates no partition in a table of the
// same name created since: its rows would be of another table's form.
func TestStreamOfADroppedTableCreatesNoPartitionInItsSuccessor(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), eventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	ws, err := e.OpenWrite(protocol.WriteRequest{Table: "events"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.DropTable(t.Context(), "events", false); err != nil {
		t.Fatal(err)
	}
	spec := eventsSpec()
	spec.Columns = []protocol.Column{{Name: "id", Type: "BIGINT"}, {Name: "dt", Type: "STRING"}, {Name: "z", Type: "INT"}}
	spec.PrimaryKey = []string{"id", "dt"}
	if _, err := e.CreateTable(t.Context(), spec, false); err != nil {
		t.Fatal(err)
	}
	rec := eventRows([]int64{1}, []string{"20260101"})
	defer rec.Release()
	if _, err := ws.Write(t.Context(), rec); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("write through the dropped table's stream: %v, want NOT_FOUND", err)
	}
	parts, err := e.ListPartitions("events", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 0 {
		t.Fatalf("the re-created table has partitions %v", parts)
	}
}
