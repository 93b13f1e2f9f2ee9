package logstore

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ ms atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ms.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	return c
}

func (c *fakeClock) now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// writeAs appends one batch of ten rows as w and returns the result.
func writeAs(t *testing.T, tbl *Table, enc *Encoder, w Writer) (Result, error) {
	t.Helper()
	rec := makeRecord(t, memtest.Allocator(t), 0, 10)
	defer rec.Release()
	return tbl.Append([]Part{{Bucket: 0, Batch: encode(t, enc, rec, w)}}, w)
}

func mustWriteAs(t *testing.T, tbl *Table, enc *Encoder, w Writer) Result {
	t.Helper()
	res, err := writeAs(t, tbl, enc, w)
	if err != nil {
		t.Fatalf("writer %s, sequence %d: %v", w.ID, w.Seq, err)
	}
	return res
}

func TestWriterStateExpires(t *testing.T) {
	const ttl = time.Hour
	mem := checkedMem(t)
	clock := newFakeClock()
	tbl := mustOpen(t, t.TempDir(), 1, Options{Now: clock.now, WriterExpiration: ttl})
	defer tbl.Close()
	enc := newEncoder(t, CodecNone, mem)

	mustWriteAs(t, tbl, enc, Writer{ID: "a", Seq: 0})
	first := mustWriteAs(t, tbl, enc, Writer{ID: "a", Seq: 1})
	if got := tbl.NextSequence("a"); got != 2 {
		t.Fatalf("next sequence of a: %d, want 2", got)
	}
	if got := tbl.NextSequence("never"); got != 0 {
		t.Fatalf("next sequence of an unknown writer: %d, want 0", got)
	}

	clock.advance(ttl) // idle exactly the expiration: still kept
	if res := mustWriteAs(t, tbl, enc, Writer{ID: "a", Seq: 1}); !res.Duplicate || res.Ends[0] != first.Ends[0] {
		t.Fatalf("retry within the expiration: %+v, want a duplicate ending at %d", res, first.Ends[0])
	}

	clock.advance(time.Millisecond)
	if got := tbl.NextSequence("a"); got != 0 {
		t.Fatalf("next sequence of an expired writer: %d, want 0", got)
	}
	for _, seq := range []int64{1, 5} {
		_, err := writeAs(t, tbl, enc, Writer{ID: "a", Seq: seq})
		if !errs.Is(err, errs.FailedPrecondition) || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("sequence %d of an expired writer: %v, want FAILED_PRECONDITION saying the state expired", seq, err)
		}
	}
	if res := mustWriteAs(t, tbl, enc, Writer{ID: "a", Seq: 2}); res.Duplicate {
		t.Fatal("the next sequence of an expired writer was taken for a duplicate")
	}
	if got := tbl.NextSequence("a"); got != 3 {
		t.Fatalf("next sequence of a after going on: %d, want 3", got)
	}

	mustWriteAs(t, tbl, enc, Writer{ID: "b", Seq: 0})
	mustWriteAs(t, tbl, enc, Writer{ID: "b", Seq: 1})
	clock.advance(ttl + time.Millisecond)
	mustWriteAs(t, tbl, enc, Writer{ID: "b", Seq: 0}) // starts again
	if got := tbl.NextSequence("b"); got != 1 {
		t.Fatalf("next sequence of b after starting again: %d, want 1", got)
	}
	if got := len(readAll(t, tbl, 0, 0, nil, mem)); got != 60 {
		t.Fatalf("%d rows, want 60 (six batches applied)", got)
	}
}

// A table written by ever new writer ids keeps only the recent ones, in
// memory and in writers.json.
func TestExpiredWritersAreDropped(t *testing.T) {
	const ttl = time.Hour
	mem := checkedMem(t)
	clock := newFakeClock()
	dir := t.TempDir()
	opts := Options{Now: clock.now, WriterExpiration: ttl}
	tbl := mustOpen(t, dir, 1, opts)
	enc := newEncoder(t, CodecNone, mem)
	for i := range 100 {
		mustWriteAs(t, tbl, enc, Writer{ID: fmt.Sprintf("old-%d", i)})
	}
	clock.advance(2 * ttl)
	mustWriteAs(t, tbl, enc, Writer{ID: "new"})
	tbl.appendMu.Lock()
	kept := len(tbl.writers)
	tbl.appendMu.Unlock()
	if kept != 1 {
		t.Fatalf("%d writers kept in memory, want 1 (the expired ones dropped)", kept)
	}
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, writersFile))
	if err != nil {
		t.Fatal(err)
	}
	var snap writerSnapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Writers) != 1 || snap.Writers["new"] == nil {
		t.Fatalf("writers.json holds %d writers, want only \"new\"", len(snap.Writers))
	}
}

// Expiry survives a restart: the replayed log and the snapshot keep each
// batch's commit time.
func TestWriterExpiryAcrossRestart(t *testing.T) {
	const ttl = time.Hour
	mem := checkedMem(t)
	clock := newFakeClock()
	dir := t.TempDir()
	opts := Options{Now: clock.now, WriterExpiration: ttl}
	tbl := mustOpen(t, dir, 1, opts)
	enc := newEncoder(t, CodecNone, mem)
	mustWriteAs(t, tbl, enc, Writer{ID: "a", Seq: 0})
	clock.advance(ttl / 2)
	mustWriteAs(t, tbl, enc, Writer{ID: "b", Seq: 0})
	crash(tbl) // no snapshot: both are replayed from the log
	clock.advance(ttl/2 + time.Millisecond)

	tbl = mustOpen(t, dir, 1, opts)
	if a, b := tbl.NextSequence("a"), tbl.NextSequence("b"); a != 0 || b != 1 {
		t.Fatalf("after a crash: next sequences a=%d b=%d, want a expired (0) and b kept (1)", a, b)
	}
	if err := tbl.Close(); err != nil { // with a snapshot this time
		t.Fatal(err)
	}
	tbl = mustOpen(t, dir, 1, opts)
	defer tbl.Close()
	if b := tbl.NextSequence("b"); b != 1 {
		t.Fatalf("after a clean restart: next sequence of b=%d, want 1", b)
	}
	clock.advance(ttl)
	if b := tbl.NextSequence("b"); b != 0 {
		t.Fatalf("next sequence of b idle past the expiration after a restart: %d, want 0", b)
	}
}
