package conformance_test

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/client"
)

// The crash test's shape: writers per cycle, rows per batch, kill/restart
// cycles, and how long writers run before the kill.
const (
	crashWriters  = 4
	crashRows     = 500
	crashCycles   = 3
	crashRunFor   = 1500 * time.Millisecond
	crashInFlight = 4 // below the server's 5 remembered batches per writer, so the last acknowledged one is still known
)

// TestCrashRecovery SIGKILLs the server while four idempotent writers are
// writing multi-bucket batches, restarts it, and checks PROTOCOL.md §5's
// promises: every acknowledged batch is there exactly once, every other batch
// wholly or not at all, nothing twice, nothing unknown; and a retry of the
// last acknowledged batch is recognised as a duplicate.
func TestCrashRecovery(t *testing.T) {
	srv := startServer(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := testContext(t, 2*time.Minute)
	c, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close() }()
	table := "fluss.crash_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	spec := client.TableSpec{
		Table:   table,
		Columns: []client.Column{{Name: "id", Type: "BIGINT", Nullable: new(false)}, {Name: "payload", Type: "STRING"}},
		Options: map[string]string{"bucket.num": "4", "bucket.key": "id"},
	}
	if _, err := c.CreateTable(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	l := &ledger{batches: map[batchKey]*batchState{}}
	for cycle := range crashCycles {
		writeUntilKilled(ctx, t, c, srv, table, cycle, l, mem)
		if err := srv.start(); err != nil {
			t.Fatalf("cycle %d: restart after SIGKILL: %v", cycle, err)
		}
		nc, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem))
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		c = nc
		acked, unacked, applied := l.verify(ctx, t, c, table, cycle)
		t.Logf("cycle %d: %d batches acknowledged, %d sent without acknowledgement of which %d were applied", cycle, acked, unacked, applied)
		if acked == 0 {
			t.Fatalf("cycle %d: no batch was acknowledged in %s", cycle, crashRunFor)
		}
		retryLastAcked(ctx, t, c, table, cycle, l, mem)
	}
}

// batchKey names one batch; ids encode it with the row: cycle<<40 |
// writer<<32 | batch<<12 | row.
type batchKey struct{ cycle, writer, batch int }

func (k batchKey) id(row int) int64 {
	return int64(k.cycle)<<40 | int64(k.writer)<<32 | int64(k.batch)<<12 | int64(row)
}

func keyOf(id int64) (batchKey, int) {
	return batchKey{int(id >> 40), int(id >> 32 & 0xff), int(id >> 12 & 0xfffff)}, int(id & 0xfff)
}

func (k batchKey) writerID() string { return fmt.Sprintf("crash-c%d-w%d", k.cycle, k.writer) }

type batchState struct {
	acked bool
	res   client.PutResult
	// present is what the first read after the crash found, for batches that
	// were not acknowledged: later reads must agree.
	present  bool
	observed bool
}

// ledger records every batch the writers sent and what came back.
type ledger struct {
	pad int // bytes each row's payload has beyond its name, for larger frames

	mu      sync.Mutex
	batches map[batchKey]*batchState
}

func (l *ledger) sent(k batchKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batches[k] = &batchState{}
}

func (l *ledger) acked(k batchKey, res client.PutResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batches[k].acked, l.batches[k].res = true, res
}

// writeUntilKilled runs the cycle's writers and SIGKILLs the server while
// they write.
func writeUntilKilled(ctx context.Context, t *testing.T, c *client.Client, srv *server, table string, cycle int, l *ledger, mem memory.Allocator) {
	t.Helper()
	var wg sync.WaitGroup
	for w := range crashWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			crashWriter(ctx, c, table, cycle, w, l, mem)
		}()
	}
	time.Sleep(crashRunFor) // writers run until the kill; nothing to wait for
	if err := srv.kill(); err != nil {
		t.Fatalf("cycle %d: SIGKILL: %v", cycle, err)
	}
	wg.Wait()
}

// crashWriter sends batches until the stream fails, recording each Send and
// each acknowledgement.
func crashWriter(ctx context.Context, c *client.Client, table string, cycle, w int, l *ledger, mem memory.Allocator) {
	id := batchKey{cycle, w, 0}.writerID()
	wr, err := c.NewWriter(ctx, client.WriteRequest{Table: table, WriterID: id}, client.WithMaxInFlight(crashInFlight))
	if err != nil {
		return
	}
	recvDone := make(chan struct{})
	go func() {
		defer close(recvDone)
		for b := 0; ; b++ {
			res, err := wr.Recv()
			if err != nil {
				return
			}
			l.acked(batchKey{cycle, w, b}, res)
		}
	}()
	for b := 0; ; b++ {
		k := batchKey{cycle, w, b}
		rec := l.batch(mem, k)
		l.sent(k)
		err := wr.Send(rec)
		rec.Release()
		if err != nil {
			break
		}
	}
	<-recvDone
	wr.Close()
}

var crashSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// batch makes the batch k: crashRows rows whose ids name it.
func (l *ledger) batch(mem memory.Allocator, k batchKey) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, crashSchema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	payload := b.Field(1).(*array.StringBuilder)
	pad := strings.Repeat(".", l.pad)
	for r := range crashRows {
		ids.Append(k.id(r))
		payload.Append("row " + strconv.Itoa(r) + " of " + k.writerID() + " batch " + strconv.Itoa(k.batch) + pad)
	}
	return b.NewRecordBatch()
}

// verify reads the whole table and checks it against the ledger.
func (l *ledger) verify(ctx context.Context, t *testing.T, c *client.Client, table string, cycle int) (acked, unacked, applied int) {
	t.Helper()
	s, err := c.Scan(ctx, client.ScanRequest{Table: table, Columns: []string{"id"}})
	if err != nil {
		t.Fatalf("cycle %d: scan after restart: %v", cycle, err)
	}
	defer s.Release()
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[batchKey][]bool{}
	for s.Next() {
		for _, id := range s.RecordBatch().Column(0).(*array.Int64).Int64Values() {
			k, row := keyOf(id)
			if _, ok := l.batches[k]; !ok || row >= crashRows {
				t.Fatalf("cycle %d: the table holds id %#x (cycle %d writer %d batch %d row %d), which was never sent", cycle, id, k.cycle, k.writer, k.batch, row)
			}
			rows := seen[k]
			if rows == nil {
				rows = make([]bool, crashRows)
				seen[k] = rows
			}
			if rows[row] {
				t.Fatalf("cycle %d: row %d of writer %s batch %d is in the table twice", cycle, row, k.writerID(), k.batch)
			}
			rows[row] = true
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("cycle %d: scan after restart: %v", cycle, err)
	}
	for k, st := range l.batches {
		n := 0
		for _, ok := range seen[k] {
			if ok {
				n++
			}
		}
		switch {
		case st.acked && n != crashRows:
			t.Fatalf("cycle %d: acknowledged batch %d of %s (ends %v) has %d of its %d rows", cycle, k.batch, k.writerID(), st.res.Buckets, n, crashRows)
		case !st.acked && n != 0 && n != crashRows:
			t.Fatalf("cycle %d: unacknowledged batch %d of %s is partly applied: %d of %d rows", cycle, k.batch, k.writerID(), n, crashRows)
		case !st.acked && st.observed && st.present != (n > 0):
			t.Fatalf("cycle %d: unacknowledged batch %d of %s was present=%v after its crash, now present=%v", cycle, k.batch, k.writerID(), st.present, n > 0)
		}
		if k.cycle != cycle {
			continue
		}
		if st.acked {
			acked++
		} else {
			unacked++
			st.observed, st.present = true, n > 0
			if n > 0 {
				applied++
			}
		}
	}
	return acked, unacked, applied
}

// retryLastAcked re-sends each writer's last acknowledged batch of the cycle
// under its writer id and sequence: the server must acknowledge it with the
// first result and apply nothing.
func retryLastAcked(ctx context.Context, t *testing.T, c *client.Client, table string, cycle int, l *ledger, mem memory.Allocator) {
	t.Helper()
	before, err := c.ListOffsets(ctx, table, client.Latest, nil)
	if err != nil {
		t.Fatal(err)
	}
	for w := range crashWriters {
		last := -1
		var first client.PutResult
		l.mu.Lock()
		for k, st := range l.batches {
			if k.cycle == cycle && k.writer == w && st.acked && k.batch > last {
				last, first = k.batch, st.res
			}
		}
		l.mu.Unlock()
		if last < 0 {
			t.Logf("cycle %d: writer %d had no batch acknowledged; nothing to retry", cycle, w)
			continue
		}
		k := batchKey{cycle, w, last}
		wr, err := c.NewWriter(ctx, client.WriteRequest{Table: table, WriterID: k.writerID(), FirstSequence: int64(last)})
		if err != nil {
			t.Fatal(err)
		}
		rec := l.batch(mem, k)
		res, err := wr.Write(rec)
		rec.Release()
		if cerr := wr.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("cycle %d: retry of %s batch %d: %v", cycle, k.writerID(), last, err)
		}
		if res.Sequence != first.Sequence || !maps.Equal(res.Buckets, first.Buckets) {
			t.Fatalf("cycle %d: retry of %s batch %d acknowledged as %+v, want the first acknowledgement %+v", cycle, k.writerID(), last, res, first)
		}
	}
	after, err := c.ListOffsets(ctx, table, client.Latest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(before, after) {
		t.Fatalf("cycle %d: the retries of acknowledged batches moved the offsets from %v to %v", cycle, before, after)
	}
}
