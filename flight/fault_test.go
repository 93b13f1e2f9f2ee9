package flight_test

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/internal/diskfault"
)

// A write that meets a full disk ends its DoPut at once with
// RESOURCE_EXHAUSTED naming the cause (not when the client next sends, nor
// at its deadline); scans go on meanwhile; once there is room a new DoPut
// succeeds without a restart, and every acknowledged row is there once.
func TestDoPutOnFullDiskFailsAtOnceAndWritesResume(t *testing.T) {
	faults := diskfault.New(vfs.Default)
	ts := start(t, engine.Options{Log: engine.LogOptions{FS: faults}})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 2, "order_id"), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 100, 1)

	faults.Set(diskfault.Write, ".log", syscall.ENOSPC)
	// Far below the test's deadline: a stream left waiting for the client's
	// next message ends with DEADLINE_EXCEEDED instead.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	w, err := ts.cl.NewWriter(wctx, client.WriteRequest{Table: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	rec := orders(ts.mem, 100, 100)
	_, err = w.Write(rec)
	rec.Release()
	wantCode(t, err, codes.ResourceExhausted)
	if !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("the error does not name the cause: %v", err)
	}
	if err := w.Close(); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("closing the failed writer: %v, want the stream's error", err)
	}
	if got := sortedIDs(t, ts); !slices.Equal(got, span(0, 100)) {
		t.Fatalf("scan while the disk is full: %d rows, want 0..99", len(got))
	}

	faults.Clear()
	write(t, ts, "orders", 200, 100, 2)
	if got, want := sortedIDs(t, ts), append(span(0, 100), span(200, 200)...); !slices.Equal(got, want) {
		t.Fatalf("after the disk has room: %d rows, want 0..99 and 200..399 once each", len(got))
	}
}

func sortedIDs(t *testing.T, ts *testServer) []int64 {
	t.Helper()
	return sorted(ids(t, ts, client.ScanRequest{Table: "orders"}))
}
