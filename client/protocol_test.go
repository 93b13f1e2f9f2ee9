package client

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// jsonEqual compares two JSON texts as values, ignoring key order and spacing.
func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad golden JSON %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON mismatch\n got: %s\nwant: %s", got, want)
	}
}

// TestOnlyTable: only a write without options goes as a PATH descriptor.
func TestOnlyTable(t *testing.T) {
	if !onlyTable(WriteRequest{Table: "t"}) || onlyTable(WriteRequest{Table: "t", Mode: ModeAppend}) ||
		onlyTable(WriteRequest{Table: "t", WriterID: "w"}) {
		t.Error("onlyTable")
	}
}

func TestAppMetadataParsing(t *testing.T) {
	pr, err := ParsePutResult([]byte(`{"sequence": 3, "rows": 124, "buckets": {"0": 124, "3": 9}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := PutResult{protocol.PutResult{Sequence: 3, Rows: 124, Buckets: map[int]int64{0: 124, 3: 9}}, 1}
	if !reflect.DeepEqual(pr, want) {
		t.Errorf("PutResult = %+v, want %+v", pr, want)
	}
	if _, err := ParsePutResult(nil); err == nil {
		t.Error("empty PutResult metadata accepted")
	}
	if _, err := ParsePutResult([]byte(`{"sequence": "x"}`)); err == nil {
		t.Error("bad PutResult metadata accepted")
	}

	var merged PutResult
	merged.merge(pr)
	merged.merge(PutResult{protocol.PutResult{Sequence: 4, Rows: 6, Buckets: map[int]int64{0: 130, 1: 2}}, 1})
	want = PutResult{protocol.PutResult{Sequence: 4, Rows: 130, Buckets: map[int]int64{0: 130, 1: 2, 3: 9}}, 2}
	if !reflect.DeepEqual(merged, want) {
		t.Errorf("merged = %+v, want %+v", merged, want)
	}

	m, ok, err := ParseBatchMeta([]byte(`{"bucket": 2, "start": 100, "next": 164, "high_watermark": 200}`))
	if err != nil || !ok || m != (BatchMeta{Bucket: 2, Start: 100, Next: 164, HighWatermark: 200}) {
		t.Errorf("BatchMeta = %+v %v %v", m, ok, err)
	}
	if _, ok, err := ParseBatchMeta(nil); ok || err != nil {
		t.Errorf("empty BatchMeta: %v %v", ok, err)
	}
	if _, _, err := ParseBatchMeta([]byte(`{`)); err == nil {
		t.Error("bad BatchMeta accepted")
	}

	var pm PlanMeta
	if err := json.Unmarshal([]byte(`{"table_id": 7, "schema_id": 2, "buckets": 4, "lake_snapshot_id": null}`), &pm); err != nil ||
		pm.TableID != 7 || pm.SchemaID != 2 || pm.Buckets != 4 || pm.LakeSnapshotID != nil {
		t.Errorf("PlanMeta = %+v %v", pm, err)
	}
	if err := json.Unmarshal([]byte(`{"lake_snapshot_id": 99}`), &pm); err != nil || pm.LakeSnapshotID == nil || *pm.LakeSnapshotID != 99 {
		t.Errorf("PlanMeta lake snapshot: %+v %v", pm, err)
	}
}

func TestParseTicket(t *testing.T) {
	b, err := Ticket{TableID: 7, Table: "fluss.orders", View: "log"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	tk, err := ParseTicket(b)
	if err != nil || tk.V != 1 || tk.TableID != 7 {
		t.Errorf("ticket %s = %+v, %v; want version 1 of table 7", b, tk, err)
	}
	if _, err := ParseTicket([]byte("not json")); err == nil {
		t.Error("bad ticket accepted")
	}
}
