package conformance_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/promscrape"
)

// The stalled follower's table: batches of rows of resumePayload random
// (incompressible) bytes, which it reads, far more than gRPC's 64 KiB windows
// buffer.
const (
	resumeBatches = 24
	resumeRows    = 64
	resumePayload = 1 << 10
)

// stalledServer is a server with a short idle timeout (1 s: a writer on a
// loaded machine must not pause that long between its batches), a client of it that
// buffers little of what it does not take (gRPC's default 64 KiB windows),
// so that its stall fills them soon, a table (id BIGINT, payload BYTES) of
// one bucket, and the server's count of open scans.
func stalledServer(t *testing.T, ctx context.Context, mem memory.Allocator, primaryKey ...string) (c *client.Client, table string, scansOpen func() float64) {
	httpAddr := freeAddr(t)
	srv := startServer(t, "--stream-idle-timeout", "1s", "--http", httpAddr)
	c, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem),
		client.WithDialOptions(grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	table = "fluss.stalled"
	spec := client.TableSpec{
		Table:      table,
		Columns:    []client.Column{{Name: "id", Type: "BIGINT"}, {Name: "payload", Type: "BYTES"}},
		PrimaryKey: primaryKey,
		Options:    map[string]string{"bucket.num": "1"},
	}
	if _, err := c.CreateTable(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	return c, table, func() float64 {
		n, err := promscrape.Sum(ctx, "http://"+httpAddr+"/metrics", "fluxgate_scans_open", nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
}

// TestFollowResumesAfterIdleTimeout: a follower that stops calling Next
// until the server ends its stream for the idle timeout goes on reading
// where it stopped when it calls Next again: every row exactly once, the
// ones written after the stall too.
func TestFollowResumesAfterIdleTimeout(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := testContext(t, 2*time.Minute)
	c, table, scansOpen := stalledServer(t, ctx, mem)
	writeStalled(ctx, t, c, table, 0, resumeBatches, mem)

	s, err := c.Scan(ctx, client.ScanRequest{Table: table, Startup: client.Earliest, Stop: client.Unbounded})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	seen := map[int64]int{}
	next := func() {
		t.Helper()
		if !s.Next() {
			t.Fatalf("the follow ended after %d rows: %v", len(seen), s.Err())
		}
		for _, id := range s.RecordBatch().Column(0).(*array.Int64).Int64Values() {
			seen[id]++
		}
	}
	for len(seen) == 0 {
		next()
	}
	// The follower stops taking batches: the server ends its stream (its only
	// one, open since it sent a batch; the resume opens the next only when
	// Next is called again).
	waitFor(ctx, t, "the server to end the stalled stream", func() bool { return scansOpen() == 0 })

	writeStalled(ctx, t, c, table, resumeBatches, 2, mem)
	for want := (resumeBatches + 2) * resumeRows; len(seen) < want; {
		next()
	}
	for id, n := range seen {
		if n != 1 || id < 0 || id >= (resumeBatches+2)*resumeRows {
			t.Fatalf("row %d read %d times", id, n)
		}
	}
}

// TestStalledSnapshotFailsClearly: a snapshot read stalled until the idle
// timeout ends it cannot resume exactly (a new snapshot is another cut of
// the bucket): after the batches that came, none twice, the read fails
// saying so, rather than repeating or skipping rows.
func TestStalledSnapshotFailsClearly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := testContext(t, 2*time.Minute)
	c, table, scansOpen := stalledServer(t, ctx, mem, "id")
	// Several snapshot batches (each at most half of a scan batch's 3 MiB).
	const batches = 96
	writeStalled(ctx, t, c, table, 0, batches, mem)

	s, err := c.Scan(ctx, client.ScanRequest{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	seen := map[int64]int{}
	for len(seen) == 0 && s.Next() {
		if !s.Meta().Snapshot {
			t.Fatalf("batch %+v is not marked a snapshot's", s.Meta())
		}
		for _, id := range s.RecordBatch().Column(0).(*array.Int64).Int64Values() {
			seen[id]++
		}
	}
	waitFor(ctx, t, "the server to end the stalled stream", func() bool { return scansOpen() == 0 })
	for s.Next() {
		for _, id := range s.RecordBatch().Column(0).(*array.Int64).Int64Values() {
			seen[id]++
		}
	}
	err = s.Err()
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "not resumed: a snapshot cannot resume") {
		t.Fatalf("the stalled snapshot ended with %v, want RESOURCE_EXHAUSTED saying it was not resumed", err)
	}
	if len(seen) == 0 || len(seen) >= batches*resumeRows {
		t.Fatalf("read %d of %d rows before the end", len(seen), batches*resumeRows)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("row %d read %d times", id, n)
		}
	}
}

// writeStalled writes batches [from, from+n) of the stalled follower's
// table, built before the writer opens, which may not pause for the idle
// timeout between them.
func writeStalled(ctx context.Context, t *testing.T, c *client.Client, table string, from, n int, mem memory.Allocator) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "payload", Type: arrow.BinaryTypes.Binary, Nullable: true}}, nil)
	payload := make([]byte, resumePayload)
	recs := make([]arrow.RecordBatch, 0, n)
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for b := from; b < from+n; b++ {
		rb := array.NewRecordBuilder(mem, schema)
		for r := range resumeRows {
			rand.Read(payload)
			rb.Field(0).(*array.Int64Builder).Append(int64(b*resumeRows + r))
			rb.Field(1).(*array.BinaryBuilder).Append(payload)
		}
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	w, err := c.NewWriter(ctx, client.WriteRequest{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range recs {
		if _, err := w.Write(rec); err != nil {
			t.Fatalf("batch %d: %v", from+i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing the test if ctx ends first.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal(fmt.Errorf("waiting for %s: %w", what, ctx.Err()))
		case <-time.After(10 * time.Millisecond):
		}
	}
}
