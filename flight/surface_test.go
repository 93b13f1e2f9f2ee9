package flight_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// doGet redeems a ticket with plain Flight, as pyarrow's do_get does, and
// passes each batch and its app_metadata to fn.
func doGet(t *testing.T, fc flight.Client, tk *flight.Ticket, fn func(arrow.RecordBatch, []byte)) {
	t.Helper()
	stream, err := fc.DoGet(ctxT(t), tk)
	if err != nil {
		t.Fatal(err)
	}
	r, err := flight.NewRecordReader(stream)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	for r.Next() {
		fn(r.RecordBatch(), r.LatestAppMetadata())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
}

// The calls a pyarrow user makes: get_flight_info on a PATH descriptor, then
// do_get on each endpoint and read_all.
func TestPathDescriptorReadsWholeTable(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 2, "order_id"), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 50, 2)
	fc := ts.cl.Flight()
	info, err := fc.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"fluss", "orders"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Endpoint) != 2 || info.TotalRecords != 100 {
		t.Fatalf("endpoints %d, total records %d; want 2 and 100", len(info.Endpoint), info.TotalRecords)
	}
	var meta map[string]any
	if err := json.Unmarshal(info.AppMetadata, &meta); err != nil || meta["buckets"] != float64(2) || meta["lake_snapshot_id"] != nil {
		t.Fatalf("app_metadata %s", info.AppMetadata)
	}
	rows := int64(0)
	for _, ep := range info.Endpoint {
		doGet(t, fc, ep.Ticket, func(rec arrow.RecordBatch, appMeta []byte) {
			rows += rec.NumRows()
			var bm protocol.BatchMeta
			if err := json.Unmarshal(appMeta, &bm); err != nil {
				t.Fatalf("batch app_metadata %q: %v", appMeta, err)
			}
			if bm.Next-bm.Start != rec.NumRows() || bm.HighWatermark < bm.Next {
				t.Fatalf("batch of %d rows has metadata %+v", rec.NumRows(), bm)
			}
		})
	}
	if rows != 100 {
		t.Fatalf("read %d rows, want 100", rows)
	}
}

func TestSchemaListingsAndActions(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	fc := ts.cl.Flight()

	sr, err := fc.GetSchema(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"orders$changelog"}})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := flight.DeserializeSchema(sr.Schema, ts.mem)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"_change_type", "_log_offset", "_commit_timestamp", "order_id", "item", "amount"}
	if got := sc.Fields(); len(got) != len(want) {
		t.Fatalf("changelog schema %v", sc)
	}
	for i, f := range sc.Fields() {
		if f.Name != want[i] {
			t.Fatalf("changelog column %d is %s, want %s", i, f.Name, want[i])
		}
	}

	lf, err := fc.ListFlights(ctx, &flight.Criteria{Expression: []byte("fluss")})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		info, err := lf.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if info.FlightDescriptor.Path[1] != "orders" {
			t.Fatalf("listed %v", info.FlightDescriptor.Path)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("ListFlights listed %d tables, want 1", n)
	}

	acts, err := ts.cl.ListActions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, a := range acts {
		names[a.Type] = a.Description != ""
	}
	for _, a := range []string{"create-database", "drop-database", "list-databases", "create-table", "drop-table", "describe-table", "list-tables", "alter-table", "list-offsets"} {
		if !names[a] {
			t.Errorf("ListActions lacks %s or its description", a)
		}
	}

	poll, err := fc.PollFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"orders"}})
	if err != nil {
		t.Fatal(err)
	}
	if poll.Info == nil || poll.FlightDescriptor != nil || poll.GetProgress() != 1 {
		t.Fatalf("PollFlightInfo answered %+v, want a complete info", poll)
	}

	info, err := ts.cl.DescribeTable(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"bucket.num": "1", "table.log.ttl": "7d", "table.log.arrow.compression.type": "zstd", "table.datalake.enabled": "false"} {
		if info.Options[k] != v {
			t.Errorf("describe-table option %s = %q, want %q", k, info.Options[k], v)
		}
	}
}

func TestTicketsOfDroppedTables(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 10, 1)
	plan, err := ts.cl.Plan(ctx, client.ScanRequest{Table: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.cl.DropTable(ctx, "orders", false); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	st, err := ts.cl.ReadTicket(ctx, plan.Endpoints[0].Ticket)
	if err == nil {
		for st.Next() {
		}
		err = st.Err()
		st.Release()
	}
	wantCode(t, err, codes.NotFound)
}

func TestLimitAndBuckets(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 4, "order_id"), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 100, 4)
	plan, err := ts.cl.Plan(ctx, client.ScanRequest{Table: "orders", Limit: new(int64(37))})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Endpoints) != 1 {
		t.Fatalf("a limited scan has %d endpoints, want 1", len(plan.Endpoints))
	}
	if got := ids(t, ts, client.ScanRequest{Table: "orders", Limit: new(int64(37))}); len(got) != 37 {
		t.Fatalf("limit 37 returned %d rows", len(got))
	}
	offs, err := ts.cl.ListOffsets(ctx, "orders", client.Latest, []int{1, 3})
	if err != nil {
		t.Fatal(err)
	}
	got := ids(t, ts, client.ScanRequest{Table: "orders", Buckets: []int{1, 3}})
	if int64(len(got)) != offs[1]+offs[3] {
		t.Fatalf("buckets 1 and 3 returned %d rows, list-offsets says %d", len(got), offs[1]+offs[3])
	}
}

// Retention removes expired segments; reading below the earliest offset is
// OUT_OF_RANGE, and full scans start at the new earliest offset.
func TestRetention(t *testing.T) {
	clock := newTestClock()
	ts := start(t, engine.Options{Log: engine.LogOptions{SegmentBytes: 1 << 10, Now: clock.now}})
	ctx := ctxT(t)
	spec := ordersSpec("orders", 1, "")
	spec.Options["table.log.ttl"] = "1h"
	if _, err := ts.cl.CreateTable(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 20, 10)
	clock.advance(2 * time.Hour)
	write(t, ts, "orders", 200, 20, 1)
	ts.eng.ExpireLogs(t.Context())
	offs, err := ts.cl.ListOffsets(ctx, "orders", client.Earliest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if offs[0] == 0 {
		t.Fatal("retention removed nothing")
	}
	got := ids(t, ts, client.ScanRequest{Table: "orders"})
	if int64(len(got)) != 220-offs[0] || got[len(got)-1] != 219 {
		t.Fatalf("after retention read %d rows ending %d, want %d ending 219", len(got), got[len(got)-1], 220-offs[0])
	}
	_, err = ts.cl.Plan(ctx, client.ScanRequest{Table: "orders", Startup: client.AtOffsets(map[int]int64{0: 0})})
	wantCode(t, err, codes.OutOfRange)
}

func TestFollowHeartbeatAndCancel(t *testing.T) {
	ts := start(t, engine.Options{FollowHeartbeat: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(ctxT(t))
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	sc, err := ts.cl.Scan(ctx, client.ScanRequest{Table: "orders", Stop: client.Unbounded})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	if !sc.Next() {
		t.Fatalf("no heartbeat: %v", sc.Err())
	}
	if sc.RecordBatch().NumRows() != 0 || sc.Meta().Next != 0 {
		t.Fatalf("first batch on an idle table: %d rows, meta %+v; want an empty heartbeat", sc.RecordBatch().NumRows(), sc.Meta())
	}
	write(t, ts, "orders", 0, 5, 1)
	for sc.Next() && sc.RecordBatch().NumRows() == 0 {
	}
	if sc.RecordBatch() == nil || sc.RecordBatch().NumRows() != 5 || sc.Meta().Next != 5 {
		t.Fatalf("follow did not deliver the 5 new rows (err %v)", sc.Err())
	}
	cancel()
	for sc.Next() {
	}
	wantCode(t, sc.Err(), codes.Canceled)
}

// A client with gRPC's default 4 MiB receive limit reads a table whose
// batches were written far larger: the server sends them as stored
// (compressed) or slices what it decodes.
func TestLargeBatchesAreSlicedUnder4MiB(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	// One 300K-row batch is about 9 MB in Arrow; the client's writer would
	// split it, so write it with a raw DoPut and a large message limit.
	rec := orders(ts.mem, 0, 300_000)
	defer rec.Release()
	w, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: "orders"}, client.WithMaxBatchBytes(64<<20))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := flight.NewClientWithMiddleware(ts.addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// As stored (the default), the compressed frame fits in one message;
	// decoded ("none"), it is sliced into several.
	for _, c := range []struct {
		desc        *flight.FlightDescriptor
		wantSeveral bool
	}{
		{&flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"orders"}}, false},
		{&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"scan": {"table": "orders", "compression": "none"}}`)}, true},
	} {
		info, err := raw.GetFlightInfo(ctx, c.desc)
		if err != nil {
			t.Fatal(err)
		}
		stream, err := raw.DoGet(ctx, info.Endpoint[0].Ticket)
		if err != nil {
			t.Fatal(err)
		}
		r, err := flight.NewRecordReader(stream, ipc.WithAllocator(ts.mem))
		if err != nil {
			t.Fatal(err)
		}
		rows, batches := int64(0), 0
		for r.Next() {
			rows += r.RecordBatch().NumRows()
			batches++
		}
		if err := r.Err(); err != nil {
			t.Fatalf("%s: reading with the default 4 MiB limit: %v", c.desc, err)
		}
		r.Release()
		if rows != 300_000 || (c.wantSeveral && batches < 3) {
			t.Fatalf("%s: read %d rows in %d batches, want 300000 (in several: %v)", c.desc, rows, batches, c.wantSeveral)
		}
	}
}
