package flight_test

import (
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// writer-state tells a writer where to go on, for log and primary-key
// tables, and forgets a writer idle past --writer-expiration.
func TestWriterStateAction(t *testing.T) {
	const ttl = time.Hour
	var nowMs atomic.Int64
	nowMs.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	opts := engine.Options{}.WithWriterExpiration(ttl)
	opts.Log.Now = func() time.Time { return time.UnixMilli(nowMs.Load()) }
	ts := start(t, opts)
	for _, spec := range []client.TableSpec{pkSpec("pk", nil), {Table: "log", Columns: pkSpec("", nil).Columns}} {
		if _, err := ts.cl.CreateTable(ctxT(t), spec, false); err != nil {
			t.Fatal(err)
		}
	}
	cols := []string{"k", "v", "s"}
	for _, table := range []string{"pk", "log"} {
		if n, err := ts.cl.WriterState(ctxT(t), table, "w"); err != nil || n != 0 {
			t.Fatalf("%s: writer-state of an unknown writer: %d, %v; want 0", table, n, err)
		}
		writePK(t, ts, client.WriteRequest{Table: table, WriterID: "w"},
			pkRows(ts.mem, cols, []any{1, 1.5, "a"}), pkRows(ts.mem, cols, []any{2, 2.5, "b"}), pkRows(ts.mem, cols, []any{3, 3.5, "c"}))
		if n, err := ts.cl.WriterState(ctxT(t), table, "w"); err != nil || n != 3 {
			t.Fatalf("%s: writer-state after three batches: %d, %v; want 3", table, n, err)
		}
	}

	nowMs.Add((ttl + time.Millisecond).Milliseconds())
	for _, table := range []string{"pk", "log"} {
		if n, err := ts.cl.WriterState(ctxT(t), table, "w"); err != nil || n != 0 {
			t.Fatalf("%s: writer-state of an expired writer: %d, %v; want 0", table, n, err)
		}
		rec := pkRows(ts.mem, cols, []any{9, 9.5, "z"})
		err := putOne(t, ts, client.WriteRequest{Table: table, WriterID: "w", FirstSequence: 1}, rec)
		rec.Release()
		if status.Code(err) != codes.FailedPrecondition {
			t.Fatalf("%s: a retry of an expired writer's batch: %v, want FAILED_PRECONDITION", table, err)
		}
	}

	if _, err := ts.cl.WriterState(ctxT(t), "log", ""); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("writer-state without a writer_id: %v, want INVALID_ARGUMENT", err)
	}
	if _, err := ts.cl.WriterState(ctxT(t), "missing", "w"); status.Code(err) != codes.NotFound {
		t.Fatalf("writer-state of a missing table: %v, want NOT_FOUND", err)
	}
}
