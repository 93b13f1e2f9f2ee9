package flight_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	fgflight "github.com/fluxgate-io/fluxgate/flight"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A reader whose client stops taking messages holds what it read against the
// memory budget, which is too small for a second reader: the second waits,
// until the idle timeout ends the stalled one (RESOURCE_EXHAUSTED, with the
// detail that says to resume) and gives its memory back.
func TestStalledReaderHoldsTheBudgetUntilItsTimeout(t *testing.T) {
	ts := startWith(t, engine.Options{}, fgflight.Options{Limits: fgflight.Limits{WriteBytes: 4 << 20, IdleTimeout: testIdle}})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	// Written through the engine: a DoPut's client may idle longer than
	// testIdle encoding its batches (under the race detector).
	const batches, rows = 8, 25_000
	ws, err := ts.eng.OpenWrite(protocol.WriteRequest{Table: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range batches {
		rec := orders(ts.mem, i*rows, rows)
		_, err := ws.Write(ctx, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}

	// gRPC's default 64 KiB windows: the client buffers little, so the
	// server, not the client, holds what the stalled reader does not take.
	stalled, err := client.Dial(ctx, ts.addr, client.WithAllocator(ts.mem),
		client.WithDialOptions(grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10)))
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	plan, err := stalled.PlanTable(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	get, err := stalled.Flight().DoGet(ctx, &flight.Ticket{Ticket: plan.Endpoints[0].Ticket})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the schema and one batch; then the client stops reading
		if _, err := get.Recv(); err != nil {
			t.Fatal(err)
		}
	}

	if got := ids(t, ts, client.ScanRequest{Table: "orders"}); len(got) != batches*rows {
		t.Fatalf("the second reader read %d rows, want %d", len(got), batches*rows)
	}
	// The stalled stream was ended; what the client had buffered comes
	// first, then the status, with the detail that says to resume, and the
	// trailer that makes pyarrow pass the details on.
	for {
		if _, err = get.Recv(); err != nil {
			break
		}
	}
	wantCode(t, err, codes.ResourceExhausted)
	st, _ := status.FromError(err)
	if d := st.Details(); len(d) != 1 || !proto.Equal(d[0].(proto.Message), &errdetails.ErrorInfo{Reason: protocol.ReasonStreamIdle, Domain: protocol.ErrorDomain}) {
		t.Errorf("details %v, want ErrorInfo{reason: %s, domain: %s}", d, protocol.ReasonStreamIdle, protocol.ErrorDomain)
	}
	if got := get.Trailer().Get("x-arrow-status"); len(got) != 1 || got[0] != "6" {
		t.Errorf("trailer x-arrow-status %q, want [6] (CapacityError)", got)
	}
}
