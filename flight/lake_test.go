package flight_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/iceberg-go/catalog/hadoop"
	icetable "github.com/apache/iceberg-go/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

func lakeOrdersSpec(name string, opts map[string]string) client.TableSpec {
	spec := ordersSpec(name, 2, "order_id")
	spec.Options["table.datalake.enabled"] = "true"
	for k, v := range opts {
		spec.Options[k] = v
	}
	return spec
}

// testClock is the log's clock in tests of retention: commit timestamps
// stand still until the test moves it.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}

func (c *testClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// earliestOffsets lists the earliest retained offset of each bucket.
func earliestOffsets(t *testing.T, ts *testServer, table string) map[int]int64 {
	t.Helper()
	offs, err := ts.cl.ListOffsets(ctxT(t), table, client.Earliest, nil)
	if err != nil {
		t.Fatal(err)
	}
	return offs
}

func sorted(v []int64) []int64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v
}

func span(from, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(from + i)
	}
	return out
}

// A log table: write, tier, write more. t$lake holds what was tiered, the
// plain name (a union read) holds everything, and the FlightInfo names the
// snapshot it used.
func TestLakeLogTableUnionRead(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, lakeOrdersSpec("orders", nil), false); err != nil {
		t.Fatal(err)
	}
	_, err := ts.cl.Plan(ctx, client.ScanRequest{Table: "orders$lake"})
	wantCode(t, err, codes.NotFound)
	_, err = ts.cl.LakeSnapshot(ctx, "orders")
	wantCode(t, err, codes.NotFound)

	write(t, ts, "orders", 0, 50, 4) // ids 0..199
	snap, err := ts.cl.TierNow(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if total := snap.Offsets[0] + snap.Offsets[1]; total != 200 {
		t.Fatalf("tier-now offsets %v sum to %d, want 200", snap.Offsets, total)
	}
	write(t, ts, "orders", 200, 50, 2) // ids 200..299, not tiered

	if lakeAt, err := ts.cl.ListOffsets(ctx, "orders$lake", client.Latest, nil); err != nil || lakeAt[0] != snap.Offsets[0] || lakeAt[1] != snap.Offsets[1] {
		t.Errorf("list-offsets of orders$lake = %v (%v), want the snapshot's %v", lakeAt, err, snap.Offsets)
	}
	if got := sorted(ids(t, ts, client.ScanRequest{Table: "orders$lake"})); !slices.Equal(got, span(0, 200)) {
		t.Errorf("orders$lake has %d ids, want 0..199", len(got))
	}
	plan, err := ts.cl.Plan(ctx, client.ScanRequest{Table: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Meta.LakeSnapshotID == nil || *plan.Meta.LakeSnapshotID != snap.SnapshotID {
		t.Errorf("union read FlightInfo lake_snapshot_id = %v, want %d", plan.Meta.LakeSnapshotID, snap.SnapshotID)
	}
	if got := sorted(ids(t, ts, client.ScanRequest{Table: "orders"})); !slices.Equal(got, span(0, 300)) {
		t.Errorf("union read has %d ids, want 0..299 once each", len(got))
	}
	// Lake partition = fluxgate bucket: iceberg-go's own bucket[2] transform
	// of order_id puts every data file where its rows' __bucket says.
	cat, err := hadoop.NewCatalog("reader", filepath.Join(ts.dir, "lake"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, icetable.Identifier{"fluss", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil || len(tasks) != 2 {
		t.Fatalf("iceberg-go plans %d files (%v), want one per bucket", len(tasks), err)
	}
	bucketField, ok := tbl.Schema().FindFieldByName("__bucket")
	if !ok {
		t.Fatalf("the lake table has no __bucket column: %s", tbl.Schema())
	}
	for _, task := range tasks {
		lo, hi := task.File.LowerBoundValues()[bucketField.ID], task.File.UpperBoundValues()[bucketField.ID]
		spec := tbl.Spec()
		part := task.File.Partition()[spec.Field(0).FieldID]
		if len(lo) != 4 || string(lo) != string(hi) || part != int32(binary.LittleEndian.Uint32(lo)) {
			t.Errorf("file %s: partition %v, __bucket from %v to %v", task.File.FilePath(), part, lo, hi)
		}
	}

	// The lake view's system columns, projection and an exact filter.
	lines := dump(t, ts, client.ScanRequest{Table: "orders$lake", Columns: []string{"order_id", "__bucket"},
		Filter: json.RawMessage(`{"and": [{"ge": ["order_id", 10]}, {"lt": ["order_id", 13]}]}`)})
	slices.Sort(lines)
	if len(lines) != 3 || lines[0][:3] != "10 " || lines[2][:3] != "12 " {
		t.Errorf("filtered lake rows = %q, want ids 10, 11, 12 with their buckets", lines)
	}
	// Each batch's next in the union read resumes after what it carried:
	// the last batch of each bucket ends at the high watermark.
	hw, err := ts.cl.ListOffsets(ctx, "orders", client.Latest, nil)
	if err != nil {
		t.Fatal(err)
	}
	last := map[int]int64{}
	sc, err := ts.cl.Scan(ctx, client.ScanRequest{Table: "orders"}, client.WithConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	for sc.Next() {
		m := sc.Meta()
		last[m.Bucket] = m.Next
	}
	sc.Release()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if last[0] != hw[0] || last[1] != hw[1] {
		t.Errorf("union read ends at %v, want the high watermarks %v", last, hw)
	}
	// Writing the lake view is refused.
	w, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: "orders$lake"})
	if err == nil {
		rec := orders(ts.mem, 0, 1)
		_, err = w.Write(rec)
		rec.Release()
		w.Close()
	}
	wantCode(t, err, codes.FailedPrecondition)
}

// Log retention removes tiered segments only; the union read stays
// complete from the lake.
func TestLakeKeepsUntieredSegmentsAndUnionReadSurvivesTTL(t *testing.T) {
	clock := newTestClock()
	ts := start(t, engine.Options{Log: engine.LogOptions{SegmentBytes: 4 << 10, Now: clock.now}})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, lakeOrdersSpec("orders", map[string]string{"table.log.ttl": "1h"}), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 20, 30) // ids 0..599, many segments
	clock.advance(2 * time.Hour)
	ts.eng.ExpireLogs(t.Context())
	if earliest := earliestOffsets(t, ts, "orders"); earliest[0] != 0 || earliest[1] != 0 {
		t.Fatalf("retention removed untiered segments: earliest offsets %v", earliest)
	}
	if _, err := ts.cl.TierNow(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 600, 20, 5)
	clock.advance(2 * time.Hour)
	ts.eng.ExpireLogs(t.Context())
	earliest := earliestOffsets(t, ts, "orders")
	if earliest[0] == 0 && earliest[1] == 0 {
		t.Fatalf("retention removed nothing once tiered: earliest offsets %v", earliest)
	}
	if got := sorted(ids(t, ts, client.ScanRequest{Table: "orders"})); !slices.Equal(got, span(0, 700)) {
		t.Errorf("union read after TTL has %d ids, want 0..699 once each", len(got))
	}
}

// A primary-key table: the lake snapshot after each round equals the
// table's rows, deletes applied, also for a reader that is not fluxgate.
func TestLakePrimaryKeyTableMatchesTheTable(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	spec := pkSpec("fruit", map[string]string{"table.datalake.enabled": "true", "bucket.num": "2"})
	if _, err := ts.cl.CreateTable(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	all := []string{"k", "v", "s"}
	writePK(t, ts, client.WriteRequest{Table: "fruit"},
		pkRows(ts.mem, all, []any{1, 1.0, "apple"}, []any{2, 2.0, "banana"}, []any{3, 3.0, "cherry"}))
	if _, err := ts.cl.TierNow(ctx, "fruit"); err != nil {
		t.Fatal(err)
	}
	writePK(t, ts, client.WriteRequest{Table: "fruit"}, pkRows(ts.mem, all, []any{2, 20.0, "banana2"}, []any{4, 4.0, "date"}))
	writePK(t, ts, client.WriteRequest{Table: "fruit", Mode: "delete"}, pkRows(ts.mem, []string{"k"}, []any{3}))
	writePK(t, ts, client.WriteRequest{Table: "fruit"}, pkRows(ts.mem, all, []any{4, 40.0, "date2"}))
	snap, err := ts.cl.TierNow(ctx, "fruit")
	if err != nil {
		t.Fatal(err)
	}
	want := dump(t, ts, client.ScanRequest{Table: "fruit"})
	slices.Sort(want)
	got := dump(t, ts, client.ScanRequest{Table: "fruit$lake", Columns: all})
	slices.Sort(got)
	wantLines(t, got, want...)
	if len(want) != 3 {
		t.Fatalf("the table has %d rows, want 3: %q", len(want), want)
	}

	// iceberg-go, through its own catalog and scan, reads the same rows.
	cat, err := hadoop.NewCatalog("reader", filepath.Join(ts.dir, "lake"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, icetable.Identifier{"fluss", "fruit"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.CurrentSnapshot().SnapshotID != snap.SnapshotID {
		t.Errorf("iceberg-go sees snapshot %d, tier-now returned %d", tbl.CurrentSnapshot().SnapshotID, snap.SnapshotID)
	}
	at, err := tbl.Scan(icetable.WithSelectedFields(all...)).ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var independent []string
	tr := array.NewTableReader(at, 0)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := range int(rec.NumRows()) {
			independent = append(independent, rec.Column(0).ValueStr(i)+" "+rec.Column(1).ValueStr(i)+" "+rec.Column(2).ValueStr(i))
		}
	}
	slices.Sort(independent)
	wantLines(t, independent, want...)

	// A round with nothing new commits nothing.
	again, err := ts.cl.TierNow(ctx, "fruit")
	if err != nil || again.SnapshotID != snap.SnapshotID {
		t.Errorf("tier-now with nothing new: snapshot %v (%v), want %d again", again, err, snap.SnapshotID)
	}
}

// Tables the lake cannot hold are refused when the lake is enabled, at
// create and at alter; tier-now needs a lake-enabled table.
func TestLakeRefusesUnmappableTables(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	bad := client.TableSpec{Table: "m", Columns: []client.Column{{Name: "x", Type: "DOUBLE"}},
		Options: map[string]string{"bucket.key": "x", "table.datalake.enabled": "true"}}
	_, err := ts.cl.CreateTable(ctx, bad, false)
	wantCode(t, err, codes.FailedPrecondition)
	if _, err := ts.cl.DescribeTable(ctx, "m"); status.Code(err) != codes.NotFound {
		t.Errorf("the refused table exists: %v", err)
	}
	delete(bad.Options, "table.datalake.enabled")
	if _, err := ts.cl.CreateTable(ctx, bad, false); err != nil {
		t.Fatal(err)
	}
	_, err = ts.cl.TierNow(ctx, "m")
	wantCode(t, err, codes.FailedPrecondition)
	_, err = ts.cl.AlterTable(ctx, client.AlterRequest{Table: "m", Set: map[string]string{"table.datalake.enabled": "true"}})
	wantCode(t, err, codes.FailedPrecondition)

	// Enabling the lake later on a mappable table works and tiers its past.
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("later", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "later", 0, 10, 1)
	if _, err := ts.cl.AlterTable(ctx, client.AlterRequest{Table: "later", Set: map[string]string{"table.datalake.enabled": "true"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.cl.TierNow(ctx, "later"); err != nil {
		t.Fatal(err)
	}
	if got := sorted(ids(t, ts, client.ScanRequest{Table: "later$lake"})); !slices.Equal(got, span(0, 10)) {
		t.Errorf("later$lake = %v, want 0..9", got)
	}
	_, err = ts.cl.Plan(ctx, client.ScanRequest{Table: "later$lake", Startup: client.Earliest})
	wantCode(t, err, codes.FailedPrecondition)
}

// A primary-key table whose log was already cut by retention when its lake
// was enabled: the first round tiers its current rows (offset -1, as Fluss's
// snapshot split), and later rounds its changes.
func TestLakeFirstRoundFromStateWhenTheLogIsCut(t *testing.T) {
	clock := newTestClock()
	ts := start(t, engine.Options{Log: engine.LogOptions{SegmentBytes: 2 << 10, Now: clock.now}})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, pkSpec("kv", map[string]string{"table.log.ttl": "1h"}), false); err != nil {
		t.Fatal(err)
	}
	all := []string{"k", "v", "s"}
	for round := range 20 {
		var rows [][]any
		for k := range 30 {
			rows = append(rows, []any{k, float64(round), fmt.Sprintf("r%d", round)})
		}
		writePK(t, ts, client.WriteRequest{Table: "kv"}, pkRows(ts.mem, all, rows...))
	}
	clock.advance(2 * time.Hour)
	ts.eng.ExpireLogs(t.Context())
	if earliest := earliestOffsets(t, ts, "kv"); earliest[0] == 0 {
		t.Fatal("retention removed nothing; the test needs a cut log")
	}
	if _, err := ts.cl.AlterTable(ctx, client.AlterRequest{Table: "kv", Set: map[string]string{"table.datalake.enabled": "true"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.cl.TierNow(ctx, "kv"); err != nil {
		t.Fatal(err)
	}
	writePK(t, ts, client.WriteRequest{Table: "kv"}, pkRows(ts.mem, all, []any{3, 99.0, "late"}, []any{40, 1.0, "new"}))
	if _, err := ts.cl.TierNow(ctx, "kv"); err != nil {
		t.Fatal(err)
	}
	want := dump(t, ts, client.ScanRequest{Table: "kv"})
	got := dump(t, ts, client.ScanRequest{Table: "kv$lake", Columns: all})
	slices.Sort(want)
	slices.Sort(got)
	wantLines(t, got, want...)
	if len(want) != 31 {
		t.Fatalf("kv has %d rows, want 31", len(want))
	}
}

// The lake guide's calls (docs/lake.md), made with arrow-go's Flight client: tier-now
// as a raw action, then PATH descriptors for t$lake and the union read.
func TestLakeThroughPlainFlight(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, lakeOrdersSpec("clicks", nil), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "clicks", 0, 10, 1)
	fc := ts.cl.Flight()
	act, err := fc.DoAction(ctx, &flight.Action{Type: "tier-now", Body: []byte(`{"table": "fluss.clicks"}`)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := act.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		SnapshotID  int64            `json:"snapshot_id"`
		Offsets     map[string]int64 `json:"offsets"`
		CommittedAt int64            `json:"committed_at"`
	}
	if err := json.Unmarshal(res.Body, &snap); err != nil || snap.CommittedAt == 0 || snap.Offsets["0"]+snap.Offsets["1"] != 10 {
		t.Fatalf("tier-now result %s (%v)", res.Body, err)
	}
	write(t, ts, "clicks", 10, 5, 1)
	read := func(path ...string) (int64, map[string]any) {
		info, err := fc.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: path})
		if err != nil {
			t.Fatal(err)
		}
		var meta map[string]any
		if err := json.Unmarshal(info.AppMetadata, &meta); err != nil {
			t.Fatal(err)
		}
		rows := int64(0)
		for _, ep := range info.Endpoint {
			doGet(t, fc, ep.Ticket, func(rec arrow.RecordBatch, _ []byte) { rows += rec.NumRows() })
		}
		return rows, meta
	}
	if rows, meta := read("fluss", "clicks$lake"); rows != 10 || meta["lake_snapshot_id"] != float64(snap.SnapshotID) {
		t.Errorf("clicks$lake: %d rows, app_metadata %v; want 10 rows of snapshot %d", rows, meta, snap.SnapshotID)
	}
	if rows, meta := read("fluss", "clicks"); rows != 15 || meta["lake_snapshot_id"] != float64(snap.SnapshotID) {
		t.Errorf("clicks: %d rows, app_metadata %v; want 15 rows and snapshot %d", rows, meta, snap.SnapshotID)
	}
}
