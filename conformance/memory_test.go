package conformance_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/fluxgate-io/fluxgate/client"
)

// The memory probes of issue 28 (item 5): whatever clients do, the server's
// peak RSS stays within its memory budget (--max-write-bytes) plus
// memorySlack. The test command runs them scaled down (a smaller budget and
// message, the same ratios of message to budget and of clients to what the
// budget lets through), so that they take seconds; -memprobe.full runs them
// at the size, by hand (GiBs of memory, a minute).
var fullMemoryProbes = flag.Bool("memprobe.full", false, "run the memory probes at full size: 40 writers × 60 MB under a 256 MiB budget, 200 stalled readers")

// memorySlack is what the server may hold beyond its budget: its code,
// runtime, stores and the transport's fixed buffers.
const memorySlack = 256 << 20

// writeProbe is the shape of the writers' probe.
type writeProbe struct {
	budget, messageLimit int64
	writers, messages    int   // writers, each on its own connection, and messages each sends
	messageBytes         int64 // bytes of one message
	rounds               int   // the whole probe again on the same server (heap growth)
}

func (p writeProbe) scaled() writeProbe {
	if *fullMemoryProbes {
		return writeProbe{budget: 256 << 20, messageLimit: 64 << 20, writers: 40, messages: 1, messageBytes: 60e6, rounds: 3}
	}
	return p
}

// TestWriteMemoryBounded: many writers, each on a connection of its own,
// send messages of a quarter of the budget as fast as they can; the server
// holds no more than its budget of them (the rest wait in the clients),
// however many connections, and again after repeated runs.
func TestWriteMemoryBounded(t *testing.T) {
	p := writeProbe{budget: 16 << 20, messageLimit: 4 << 20, writers: 40, messages: 1, messageBytes: 3_750_000, rounds: 2}.scaled()
	srv := startServer(t, "--max-write-bytes", strconv.FormatInt(p.budget, 10),
		"--max-message-bytes", strconv.FormatInt(p.messageLimit, 10))
	ctx := testContext(t, 5*time.Minute)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	table := createBlobTable(t, ctx, srv.addr, "write_probe")
	rec := blobBatch(t, mem, p.messageBytes)
	defer rec.Release()

	for round := range p.rounds {
		start := time.Now()
		var wg sync.WaitGroup
		errc := make(chan error, p.writers)
		for w := range p.writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := writeBlobs(ctx, srv.addr, table, rec, p.messages); err != nil {
					errc <- fmt.Errorf("writer %d: %w", w, err)
				}
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		peak := peakRSS(t, srv)
		t.Logf("round %d: %d writers × %d messages of %d bytes in %s; server peak RSS %d MiB (budget %d MiB)",
			round, p.writers, p.messages, p.messageBytes, time.Since(start).Round(time.Millisecond), peak>>20, p.budget>>20)
		if peak > p.budget+memorySlack {
			t.Errorf("round %d: server peak RSS %d MiB, over the budget of %d MiB + %d MiB", round, peak>>20, p.budget>>20, memorySlack>>20)
		}
	}
}

// readProbe is the shape of the stalled readers' probe.
type readProbe struct {
	budget     int64
	tableBytes int64 // written before the readers start, in frames of frameBytes
	frameBytes int64
	readers    int // DoGet streams that read one message and stop
	conns      int // connections the readers share
}

func (p readProbe) scaled() readProbe {
	if *fullMemoryProbes {
		return readProbe{budget: 256 << 20, tableBytes: 512 << 20, frameBytes: 4 << 20, readers: 200, conns: 20}
	}
	return p
}

// TestStalledReadersMemoryBounded: readers that take one batch of a large
// table and then stop reading (without ending their streams) make the server
// stop producing for them; what it holds for them stays within its budget,
// and readers past what the budget holds wait.
func TestStalledReadersMemoryBounded(t *testing.T) {
	p := readProbe{budget: 32 << 20, tableBytes: 64 << 20, frameBytes: 4 << 20, readers: 50, conns: 5}.scaled()
	srv := startServer(t, "--max-write-bytes", strconv.FormatInt(p.budget, 10))
	ctx := testContext(t, 5*time.Minute)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	table := createBlobTable(t, ctx, srv.addr, "read_probe")
	rec := blobBatch(t, mem, p.frameBytes)
	defer rec.Release()
	if err := writeBlobs(ctx, srv.addr, table, rec, int(p.tableBytes/p.frameBytes)); err != nil {
		t.Fatal(err)
	}
	afterWrite := peakRSS(t, srv)

	// Each reader's connection has gRPC's default 64 KiB windows, as most
	// Flight clients do: the server, not the client, holds what it sends
	// ahead.
	var clients []*client.Client
	for range p.conns {
		c, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem),
			client.WithDialOptions(grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10)))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	plan, err := clients[0].PlanTable(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	readCtx, stopReaders := context.WithCancel(ctx)
	defer stopReaders()
	var served atomic.Int64 // readers that got their batch
	errc := make(chan error, p.readers)
	for r := range p.readers {
		s, err := clients[r%p.conns].Flight().DoGet(readCtx, &flight.Ticket{Ticket: plan.Endpoints[0].Ticket})
		if err != nil {
			t.Fatal(err)
		}
		// The schema, then one batch; then the reader stops. Readers the
		// budget has no room for wait for their first message.
		go func() {
			for range 2 {
				if _, err := s.Recv(); err != nil {
					if readCtx.Err() == nil {
						errc <- fmt.Errorf("reader %d: %w", r, err)
					}
					return
				}
			}
			served.Add(1)
		}()
	}
	peak := settledPeakRSS(t, srv, served.Load)
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
	t.Logf("%d readers stalled on a %d MiB table, %d of them served a batch: server peak RSS %d MiB (%d MiB after writing it; budget %d MiB)",
		p.readers, p.tableBytes>>20, served.Load(), peak>>20, afterWrite>>20, p.budget>>20)
	if served.Load() == 0 {
		t.Fatal("no reader was served a batch")
	}
	if peak > p.budget+memorySlack {
		t.Errorf("server peak RSS %d MiB with %d stalled readers, over the budget of %d MiB + %d MiB", peak>>20, p.readers, p.budget>>20, memorySlack>>20)
	}
}

var blobSchema = arrow.NewSchema([]arrow.Field{{Name: "b", Type: arrow.BinaryTypes.Binary}}, nil)

// createBlobTable creates a log table of one BINARY column in one bucket.
func createBlobTable(t *testing.T, ctx context.Context, addr, name string) string {
	t.Helper()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	table := "fluss." + name
	spec := client.TableSpec{Table: table, Columns: []client.Column{{Name: "b", Type: "BYTES"}},
		Options: map[string]string{"bucket.num": "1"}}
	if _, err := c.CreateTable(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	return table
}

// blobBatch is a batch of random (incompressible) values of 64 KiB, about
// size bytes in all.
func blobBatch(t *testing.T, mem memory.Allocator, size int64) arrow.RecordBatch {
	t.Helper()
	const valueBytes = 64 << 10
	b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	defer b.Release()
	value := make([]byte, valueBytes)
	for n := int64(0); n < size; n += valueBytes {
		rand.Read(value)
		b.Append(value[:min(valueBytes, size-n)])
	}
	col := b.NewArray()
	defer col.Release()
	return array.NewRecordBatch(blobSchema, []arrow.Array{col}, int64(col.Len()))
}

// writeBlobs writes rec n times to table through a connection of its own,
// as one message each, and waits for their acknowledgements.
func writeBlobs(ctx context.Context, addr, table string, rec arrow.RecordBatch, n int) error {
	c, err := client.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	w, err := c.NewWriter(ctx, client.WriteRequest{Table: table}, client.WithMaxBatchBytes(-1), client.WithWriteCompression("none"))
	if err != nil {
		return err
	}
	defer w.Close()
	for range n {
		if err := w.Send(rec); err != nil {
			return err
		}
	}
	if err := w.CloseSend(); err != nil {
		return err
	}
	for {
		if _, err := w.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// peakRSS is the server's peak resident set size (VmHWM), in bytes.
func peakRSS(t *testing.T, srv *server) int64 {
	t.Helper()
	kib, err := peakRSSKiB(srv.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return int64(kib) << 10
}

// settledPeakRSS waits until neither the server's resident set nor progress
// has grown for a second (the server has made all it will for clients that
// stopped reading), within 30 s, and returns its peak RSS.
func settledPeakRSS(t *testing.T, srv *server, progress func() int64) int64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	lastRSS, lastProgress, since := rss(t, srv), progress(), time.Now()
	for time.Since(since) < time.Second {
		if time.Now().After(deadline) {
			t.Fatalf("the server's RSS (%d MiB) or its readers' progress still grow after 30 s", lastRSS>>20)
		}
		time.Sleep(50 * time.Millisecond)
		if now, p := rss(t, srv), progress(); now > lastRSS+(1<<20) || p != lastProgress {
			lastRSS, lastProgress, since = max(now, lastRSS), p, time.Now()
		}
	}
	return peakRSS(t, srv)
}

// rss is the server's resident set size now (VmRSS), in bytes.
func rss(t *testing.T, srv *server) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", srv.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kib << 10
		}
	}
	t.Fatal("no VmRSS in /proc/<pid>/status")
	return 0
}
