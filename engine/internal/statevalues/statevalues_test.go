package statevalues

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/fluxgate-io/fluxgate/kv"
)

const table, bucket = 7, 1

// stateOf stores n values in the bucket (and one in another bucket, which a
// stream of this one must not see) and returns a snapshot of them.
func stateOf(t *testing.T, n int) *kv.Snapshot {
	t.Helper()
	store, err := kv.Open(t.TempDir(), kv.Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	})
	txn := store.NewTxn()
	for i := range n {
		if err := txn.Set(kv.RowKey(nil, table, bucket, fmt.Appendf(nil, "%08d", i)), fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Set(kv.RowKey(nil, table, bucket+1, []byte("other")), []byte("other")); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	snap := store.Snapshot()
	t.Cleanup(func() {
		if err := snap.Close(); err != nil {
			t.Error(err)
		}
	})
	return snap
}

// Every value of the bucket arrives once, in key order, across chunk
// boundaries, in chunks of at most ChunkValues.
func TestStreamAcrossChunks(t *testing.T) {
	const n = 2*ChunkValues + 5
	s := Start(context.Background(), stateOf(t, n), table, bucket)
	defer s.Close()
	var c *Chunk
	read := 0
	for {
		var err error
		if c, err = s.Next(c); err != nil {
			t.Fatal(err)
		}
		if c == nil {
			break
		}
		if c.Len() > ChunkValues {
			t.Fatalf("chunk of %d values, at most %d", c.Len(), ChunkValues)
		}
		for i := range c.Len() {
			if got, want := string(c.Value(i)), fmt.Sprintf("v%d", read); got != want {
				t.Fatalf("value %d is %q, want %q", read, got, want)
			}
			read++
		}
	}
	if read != n {
		t.Fatalf("read %d values, want %d", read, n)
	}
}

// A stream whose reader stops early ends its iteration; a cancelled one
// reports the cancellation.
func TestStreamStops(t *testing.T) {
	snap := stateOf(t, 8*ChunkValues)
	s := Start(context.Background(), snap, table, bucket)
	if c, err := s.Next(nil); err != nil || c == nil || c.Len() != ChunkValues {
		t.Fatalf("first chunk: %v, %v", c, err)
	}
	s.Close() // returns once the iterating goroutine has ended

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s = Start(ctx, snap, table, bucket)
	defer s.Close()
	var err error
	for c := (*Chunk)(nil); err == nil; {
		if c, err = s.Next(c); err == nil && c == nil {
			t.Fatal("a cancelled stream ended without an error")
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled stream: %v", err)
	}
}
