package flight_test

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	fgflight "github.com/fluxgate-io/fluxgate/flight"
)

const testIdle = 300 * time.Millisecond

// A stream whose client sends nothing for the idle timeout is ended with
// RESOURCE_EXHAUSTED: before its first message, and after its batches.
func TestIdleStreamsAreClosed(t *testing.T) {
	ts := startWith(t, engine.Options{}, fgflight.Options{Limits: fgflight.Limits{StreamIdleTimeout: testIdle}})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	t.Run("DoPut before the schema", func(t *testing.T) {
		put, err := ts.cl.Flight().DoPut(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = put.Recv()
		wantCode(t, err, codes.ResourceExhausted)
	})
	t.Run("DoExchange before the schema", func(t *testing.T) {
		ex, err := ts.cl.Flight().DoExchange(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ex.Recv()
		wantCode(t, err, codes.ResourceExhausted)
	})
	t.Run("DoPut after a batch", func(t *testing.T) {
		w, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: "orders"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		rec := orders(ts.mem, 0, 10)
		_, err = w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = w.Recv() // nothing pending: waits for the stream's end
		wantCode(t, err, codes.ResourceExhausted)
		if d := time.Since(start); d < testIdle/2 {
			t.Fatalf("the idle stream was closed after %s, before the timeout of %s", d, testIdle)
		}
	})
}

// A client that keeps sending, however slowly, within the timeout is not cut.
func TestActiveStreamIsNotClosed(t *testing.T) {
	ts := startWith(t, engine.Options{}, fgflight.Options{Limits: fgflight.Limits{StreamIdleTimeout: testIdle}})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	w, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 { // 8 × timeout/3: well past one timeout in total
		rec := orders(ts.mem, i*10, 10)
		_, err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		time.Sleep(testIdle / 3)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, ts, client.ScanRequest{Table: "orders"}); len(got) != 80 {
		t.Fatalf("read %d rows, want 80", len(got))
	}
}
