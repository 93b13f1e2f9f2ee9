package conformance_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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

// The flood test's shape: writers, rows of floodPayload bytes per batch (about
// 3 MiB a batch), how long they write, the server's write budget and the
// bound on its peak RSS.
const (
	floodWriters   = 8
	floodRows      = 1024
	floodPayload   = 3 << 10
	floodRunFor    = 4 * time.Second
	floodBudget    = 16 << 20
	floodMaxRSSKiB = 1 << 20 // 1 GiB
)

// TestFloodMemoryBounded: writers that send large batches as fast as they can,
// far faster than the write budget lets through, are slowed, not buffered:
// the server's peak RSS stays bounded, and every acknowledged batch is
// readable exactly once.
func TestFloodMemoryBounded(t *testing.T) {
	srv := startServer(t, "--max-write-bytes", strconv.Itoa(floodBudget))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := testContext(t, time.Minute)
	c, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	table := "fluss.flood_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	spec := client.TableSpec{
		Table:   table,
		Columns: []client.Column{{Name: "id", Type: "BIGINT", Nullable: new(false)}, {Name: "payload", Type: "STRING"}},
		Options: map[string]string{"bucket.num": "4", "bucket.key": "id"},
	}
	if _, err := c.CreateTable(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	payload := strings.Repeat("x", floodPayload)
	acked := make([]int, floodWriters) // batches acknowledged per writer, in order
	var wg sync.WaitGroup
	errc := make(chan error, floodWriters)
	deadline := time.Now().Add(floodRunFor)
	for w := range floodWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := floodWriter(ctx, c, table, w, payload, deadline, mem)
			acked[w] = n
			if err != nil {
				errc <- fmt.Errorf("writer %d: %w", w, err)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	rss, err := peakRSSKiB(srv.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range acked {
		total += n
	}
	t.Logf("%d batches (%d MiB) acknowledged in %s; server peak RSS %d MiB", total, total*floodRows*floodPayload>>20, floodRunFor, rss>>10)
	if rss > floodMaxRSSKiB {
		t.Errorf("server peak RSS %d MiB, over the bound of %d MiB", rss>>10, floodMaxRSSKiB>>10)
	}
	if total == 0 {
		t.Fatal("no batch was acknowledged")
	}
	// Every acknowledged row, exactly once; nothing else.
	s, err := c.Scan(ctx, client.ScanRequest{Table: table, Columns: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	seen := map[int64]bool{}
	for s.Next() {
		for _, id := range s.RecordBatch().Column(0).(*array.Int64).Int64Values() {
			w, b, r := int(id>>32), int(id>>12&0xfffff), int(id&0xfff)
			if w >= floodWriters || b >= acked[w] || r >= floodRows {
				t.Fatalf("the table holds id %#x (writer %d batch %d row %d), which was not acknowledged", id, w, b, r)
			}
			if seen[id] {
				t.Fatalf("id %#x is in the table twice", id)
			}
			seen[id] = true
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != total*floodRows {
		t.Fatalf("read %d rows, want the %d acknowledged", len(seen), total*floodRows)
	}
}

var floodSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// floodWriter sends batches until deadline without waiting for their
// acknowledgements (many in flight), then flushes; it returns how many were
// acknowledged.
func floodWriter(ctx context.Context, c *client.Client, table string, w int, payload string, deadline time.Time, mem memory.Allocator) (int, error) {
	wr, err := c.NewWriter(ctx, client.WriteRequest{Table: table}, client.WithMaxInFlight(64))
	if err != nil {
		return 0, err
	}
	acked := 0
	recvErr := make(chan error, 1)
	go func() {
		for {
			if _, err := wr.Recv(); err != nil {
				recvErr <- err
				return
			}
			acked++
		}
	}()
	var sendErr error
	for b := 0; time.Now().Before(deadline); b++ {
		rb := array.NewRecordBuilder(mem, floodSchema)
		for r := range floodRows {
			rb.Field(0).(*array.Int64Builder).Append(int64(w)<<32 | int64(b)<<12 | int64(r))
			rb.Field(1).(*array.StringBuilder).Append(payload)
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		sendErr = wr.Send(rec)
		rec.Release()
		if sendErr != nil {
			break
		}
	}
	if sendErr == nil {
		sendErr = wr.CloseSend()
	}
	err = <-recvErr // io.EOF once every sent batch is acknowledged
	if cerr := wr.Close(); sendErr == nil {
		sendErr = cerr
	}
	if sendErr != nil {
		return acked, sendErr
	}
	if !errors.Is(err, io.EOF) {
		return acked, err
	}
	return acked, nil
}

// peakRSSKiB is VmHWM of a process: its peak resident set size, in KiB.
func peakRSSKiB(pid int) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}
