package flight_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	fgflight "github.com/fluxgate-io/fluxgate/flight"
)

func TestStreamsPerClientLimit(t *testing.T) {
	ts := startWith(t, engine.Options{}, fgflight.Options{Limits: fgflight.Limits{MaxStreamsPerClient: 2}})
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	var open []*client.Scanner
	defer func() {
		cancel()
		for _, sc := range open {
			sc.Release()
		}
	}()
	for range 2 {
		sc, err := ts.cl.Scan(ctx, client.ScanRequest{Table: "orders", Stop: client.Unbounded})
		if err != nil {
			t.Fatal(err)
		}
		if !sc.Next() { // the first heartbeat: the stream is open on the server
			t.Fatalf("follow did not start: %v", sc.Err())
		}
		open = append(open, sc)
	}
	sc, err := ts.cl.Scan(ctx, client.ScanRequest{Table: "orders", Stop: client.Unbounded})
	if err == nil {
		for sc.Next() {
		}
		err = sc.Err()
		sc.Release()
	}
	wantCode(t, err, codes.ResourceExhausted)
}

// With a write budget far below one stream's batches in flight, writes wait
// for acknowledgements instead of failing or piling up.
func TestWriteBudgetSlowsWriters(t *testing.T) {
	ts := startWith(t, engine.Options{}, fgflight.Options{Limits: fgflight.Limits{MaxWriteBytes: 64 << 10}})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	w, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		rec := orders(ts.mem, i*5000, 5000) // ~150 KB each, over the budget
		err := w.Send(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, ts, client.ScanRequest{Table: "orders"}); len(got) != 200_000 {
		t.Fatalf("read %d rows, want 200000", len(got))
	}
}
