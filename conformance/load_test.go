package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
)

// The load test's shape: 16 writers (half on a log table, half on a
// primary-key table) and 16 readers (followers and bounded scans of the log
// table, lookups on the primary-key table) for loadRunFor, on loopback.
const (
	loadWriters   = 16
	loadFollowers = 6
	loadScanners  = 5
	loadLookupers = 5
	loadRows      = 200
	loadRunFor    = 30 * time.Second
)

// runOver reports whether err ended a reader because the run's time was up.
// The server enforces the call's deadline too, from the timeout the client
// sent, and may end the call a moment before the client's context expires.
func runOver(runCtx context.Context, err error) bool {
	if runCtx.Err() != nil {
		return true
	}
	deadline, _ := runCtx.Deadline()
	return status.Code(err) == codes.DeadlineExceeded && time.Until(deadline) < time.Second
}

// loadID encodes (writer, batch, row): writer<<32 | batch<<12 | row.
func loadID(w, b, r int) int64 { return int64(w)<<32 | int64(b)<<12 | int64(r) }

func loadKey(id int64) (w, b, r int) { return int(id >> 32), int(id >> 12 & 0xfffff), int(id & 0xfff) }

// loadLedger is how many batches each writer sent and had acknowledged.
type loadLedger struct {
	mu    sync.Mutex
	sent  [loadWriters]int
	acked [loadWriters]int
}

func (l *loadLedger) ackedOf(w int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acked[w]
}

// TestLoad runs 32 concurrent clients against the server for 30 s; afterwards
// every acknowledged row is readable exactly once, nothing else is there, and
// the server is healthy and ready.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 30 s against the fluxgate binary")
	}
	httpAddr := freeAddr(t)
	srv := startServer(t, "--http", httpAddr)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := testContext(t, 3*time.Minute)
	c, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	logTable, pkTable := "fluss.load_log_"+suffix, "fluss.load_pk_"+suffix
	cols := []client.Column{{Name: "id", Type: "BIGINT", Nullable: new(false)}, {Name: "payload", Type: "STRING"}}
	opts := map[string]string{"bucket.num": "4", "bucket.key": "id"}
	if _, err := c.CreateTable(ctx, client.TableSpec{Table: logTable, Columns: cols, Options: opts}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTable(ctx, client.TableSpec{Table: pkTable, Columns: cols, PrimaryKey: []string{"id"}, Options: opts}, false); err != nil {
		t.Fatal(err)
	}
	tableOf := func(w int) string {
		if w%2 == 0 {
			return logTable
		}
		return pkTable
	}

	l := &loadLedger{}
	runCtx, stop := context.WithTimeout(ctx, loadRunFor)
	defer stop()
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	report := func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	for w := range loadWriters {
		wg.Go(func() {
			if err := loadWriter(runCtx, c, tableOf(w), w, l, mem); err != nil {
				report(fmt.Errorf("writer %d: %w", w, err))
			}
		})
	}
	followers := make([]*loadFollower, loadFollowers)
	var fwg sync.WaitGroup
	fctx, stopFollowers := context.WithCancel(ctx)
	defer stopFollowers()
	for i := range followers {
		f := &loadFollower{seen: map[int64]bool{}}
		followers[i] = f
		fwg.Go(func() {
			if err := f.run(fctx, c, logTable, l); err != nil {
				report(fmt.Errorf("follower %d: %w", i, err))
			}
		})
	}
	var reads, lookups int64
	var cmu sync.Mutex
	for i := range loadScanners {
		wg.Go(func() {
			for runCtx.Err() == nil {
				if err := loadBoundedScan(runCtx, c, logTable, l); err != nil {
					if !runOver(runCtx, err) {
						report(fmt.Errorf("scanner %d: %w", i, err))
					}
					return
				}
				cmu.Lock()
				reads++
				cmu.Unlock()
			}
		})
	}
	for i := range loadLookupers {
		wg.Go(func() {
			n, err := loadLookups(runCtx, c, pkTable, 2*i+1, l, mem)
			cmu.Lock()
			lookups += n
			cmu.Unlock()
			if err != nil && !runOver(runCtx, err) {
				report(fmt.Errorf("lookuper %d: %w", i, err))
			}
		})
	}
	wg.Wait()
	// The followers must catch up with every acknowledged log row.
	want := 0
	for w := 0; w < loadWriters; w += 2 {
		want += l.ackedOf(w) * loadRows
	}
	// The followers read as fast as the writers write only when they have the
	// cores to: under -race on two, decompressing the batches they get as
	// stored, they end a full-speed run up to a million rows behind and catch
	// up at ~80K rows/s. So a follower fails when it stops making progress
	// for 30 s (a stall), or is not there after 3 minutes, not when it is slow.
	deadline := time.Now().Add(3 * time.Minute)
	for _, f := range followers {
		progress, at := f.count(), time.Now()
		for f.count() < want && time.Now().Before(deadline) && time.Since(at) < 30*time.Second {
			time.Sleep(50 * time.Millisecond)
			if n := f.count(); n > progress {
				progress, at = n, time.Now()
			}
		}
		if n := f.count(); n != want {
			t.Errorf("a follower saw %d rows of the %d acknowledged", n, want)
		}
	}
	stopFollowers()
	fwg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	total := 0
	for w := range loadWriters {
		if l.sent[w] != l.acked[w] {
			t.Errorf("writer %d: %d batches sent, %d acknowledged", w, l.sent[w], l.acked[w])
		}
		total += l.acked[w]
	}
	t.Logf("%s: %d batches (%d rows) acknowledged, %d bounded scans, %d lookup batches", loadRunFor, total, total*loadRows, reads, lookups)

	// Every acknowledged row, exactly once, in both tables; nothing else.
	for _, table := range []string{logTable, pkTable} {
		ids, err := loadScanIDs(ctx, c, table)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		n := 0
		for _, id := range ids {
			w, b, r := loadKey(id)
			if w >= loadWriters || tableOf(w) != table || b >= l.acked[w] || r >= loadRows {
				t.Fatalf("%s holds id %#x (writer %d batch %d row %d), which was not acknowledged", table, id, w, b, r)
			}
			if seen[id] {
				t.Fatalf("%s holds id %#x twice", table, id)
			}
			seen[id] = true
			n++
		}
		want := 0
		for w := range loadWriters {
			if tableOf(w) == table {
				want += l.acked[w] * loadRows
			}
		}
		if n != want {
			t.Fatalf("%s: read %d rows, want the %d acknowledged", table, n, want)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + httpAddr + path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s answered %s: %s", path, resp.Status, body)
		}
	}
}

var loadSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func loadBatch(mem memory.Allocator, w, b int) arrow.RecordBatch {
	rb := array.NewRecordBuilder(mem, loadSchema)
	defer rb.Release()
	for r := range loadRows {
		rb.Field(0).(*array.Int64Builder).Append(loadID(w, b, r))
		rb.Field(1).(*array.StringBuilder).Append("writer " + strconv.Itoa(w) + " batch " + strconv.Itoa(b) + " row " + strconv.Itoa(r))
	}
	return rb.NewRecordBatch()
}

// loadWriter writes idempotent batches until ctx ends, then flushes them.
func loadWriter(ctx context.Context, c *client.Client, table string, w int, l *loadLedger, mem memory.Allocator) error {
	// The stream outlives ctx: what was sent is flushed, not cancelled.
	wr, err := c.NewWriter(context.WithoutCancel(ctx), client.WriteRequest{Table: table, WriterID: "load-" + strconv.Itoa(w)}, client.WithMaxInFlight(4))
	if err != nil {
		return err
	}
	recvErr := make(chan error, 1)
	go func() {
		for {
			if _, err := wr.Recv(); err != nil {
				recvErr <- err
				return
			}
			l.mu.Lock()
			l.acked[w]++
			l.mu.Unlock()
		}
	}()
	var sendErr error
	for b := 0; ctx.Err() == nil; b++ {
		rec := loadBatch(mem, w, b)
		l.mu.Lock()
		l.sent[w]++
		l.mu.Unlock()
		sendErr = wr.Send(rec)
		rec.Release()
		if sendErr != nil {
			break
		}
	}
	if sendErr == nil {
		sendErr = wr.CloseSend()
	}
	err = <-recvErr
	if cerr := wr.Close(); sendErr == nil {
		sendErr = cerr
	}
	if sendErr != nil {
		return sendErr
	}
	if !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// loadFollower follows the log table from the start and checks that no row
// comes twice.
type loadFollower struct {
	mu   sync.Mutex
	seen map[int64]bool
}

func (f *loadFollower) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

func (f *loadFollower) run(ctx context.Context, c *client.Client, table string, l *loadLedger) error {
	s, err := c.Scan(ctx, client.ScanRequest{Table: table, Columns: []string{"id"}, Stop: client.Unbounded})
	if err != nil {
		return err
	}
	defer s.Release()
	for s.Next() {
		if s.RecordBatch().NumRows() == 0 {
			continue
		}
		f.mu.Lock()
		for _, id := range s.RecordBatch().Column(0).(*array.Int64).Int64Values() {
			if f.seen[id] {
				f.mu.Unlock()
				return fmt.Errorf("id %#x came twice", id)
			}
			f.seen[id] = true
		}
		f.mu.Unlock()
	}
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("the follow ended: %v", s.Err())
}

func loadScanIDs(ctx context.Context, c *client.Client, table string) ([]int64, error) {
	s, err := c.Scan(ctx, client.ScanRequest{Table: table, Columns: []string{"id"}})
	if err != nil {
		return nil, err
	}
	defer s.Release()
	var ids []int64
	for s.Next() {
		ids = append(ids, s.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
	}
	return ids, s.Err()
}

// loadBoundedScan reads the log table to its latest offsets: no row twice,
// and every batch acknowledged before the scan started is there whole.
func loadBoundedScan(ctx context.Context, c *client.Client, table string, l *loadLedger) error {
	var before [loadWriters]int
	l.mu.Lock()
	before = l.acked
	l.mu.Unlock()
	ids, err := loadScanIDs(ctx, c, table)
	if err != nil {
		return err
	}
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return fmt.Errorf("id %#x read twice", id)
		}
		seen[id] = true
	}
	for w := 0; w < loadWriters; w += 2 {
		for b := range before[w] {
			for _, r := range []int{0, loadRows - 1} {
				if !seen[loadID(w, b, r)] {
					return fmt.Errorf("row %d of writer %d's acknowledged batch %d is missing", r, w, b)
				}
			}
		}
	}
	return nil
}

// loadLookups looks up the keys of writer w's acknowledged batches in the
// primary-key table until ctx ends: each must be found. It returns how many
// key batches it looked up.
func loadLookups(ctx context.Context, c *client.Client, table string, w int, l *loadLedger, mem memory.Allocator) (int64, error) {
	lk, err := c.Lookup(ctx, client.LookupRequest{Table: table, Columns: []string{"id"}})
	if err != nil {
		return 0, err
	}
	defer lk.Close()
	keySchema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var n int64
	for b := 0; ctx.Err() == nil; {
		acked := l.ackedOf(w)
		if acked == 0 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		b = (b + 1) % acked
		kb := array.NewRecordBuilder(mem, keySchema)
		for r := 0; r < loadRows; r += 7 {
			kb.Field(0).(*array.Int64Builder).Append(loadID(w, b, r))
		}
		keys := kb.NewRecordBatch()
		kb.Release()
		ans, meta, err := lk.Lookup(keys)
		nkeys := int(keys.NumRows())
		keys.Release()
		if err != nil {
			return n, err
		}
		rows := ans.NumRows()
		ans.Release()
		if rows != int64(nkeys) || meta.Rows != nkeys {
			return n, fmt.Errorf("lookup of %d keys of writer %d's acknowledged batch %d found %d rows (meta %+v)", nkeys, w, b, rows, meta)
		}
		n++
	}
	return n, nil
}
