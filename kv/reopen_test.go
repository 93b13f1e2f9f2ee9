package kv

import (
	"syscall"
	"testing"

	"github.com/fluxgate-io/fluxgate/errs"
)

// After a failed write of pebble's log, Reopen refuses while the disk still
// fails (the store stays readable), and once it works closes the broken
// instance and opens the store again: catchUp sees the durable state before
// anyone else, writes resume, and the auto-increment allocator, kept across
// the reopen, hands out no id twice.
func TestReopenAfterFailedLogWrite(t *testing.T) {
	d := newDisk()
	s, err := Open(t.TempDir(), Options{CacheBytes: 1 << 20, FS: d})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids, err := s.IDs(1, 1, 1<<40) // a block of 1: every id is a synced write
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	next := func() error {
		id, err := ids.Next()
		if err == nil {
			if seen[id] {
				t.Fatalf("id %d handed out twice", id)
			}
			seen[id] = true
		}
		return err
	}
	if err := writeApplied(s, 1, 1); err != nil {
		t.Fatal(err)
	}
	for range 3 { // synced: the applied offset before them is durable too
		if err := next(); err != nil {
			t.Fatal(err)
		}
	}

	d.fail("", syscall.EIO) // every file: the disk itself fails
	if err := next(); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("id reserved while the disk fails: %v, want unavailable", err)
	}
	if !s.Broken() {
		t.Fatal("store not broken after its log failed")
	}
	caughtUp := false
	catchUp := func(*Store) { caughtUp = true }
	if err := s.Reopen(catchUp); !errs.Is(err, errs.Unavailable) || caughtUp {
		t.Fatalf("reopen while the disk fails: %v (caught up %v), want unavailable", err, caughtUp)
	}
	if got, err := s.Applied(1, 0); err != nil || got != 1 {
		t.Fatalf("read after a refused reopen: %d, %v; want 1", got, err)
	}

	d.heal()
	stale := s.NewTxn() // of a writer the reopen's caller failed to quiesce
	if err := s.Reopen(func(r *Store) {
		caughtUp = true
		if got, err := r.Applied(1, 0); err != nil || got != 1 {
			t.Errorf("catchUp reads applied %d, %v; want the durable 1", got, err)
		}
	}); err != nil {
		t.Fatalf("reopen once the disk works: %v", err)
	}
	if !caughtUp || s.Broken() {
		t.Fatalf("after reopen: caught up %v, broken %v", caughtUp, s.Broken())
	}
	if err := stale.Set(RowKey(nil, 1, 0, []byte("k")), []byte("stale")); err != nil {
		t.Fatal(err)
	}
	if err := stale.Commit(); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("commit of a txn begun before the reopen: %v, want unavailable", err)
	}
	if err := writeApplied(s, 1, 2); err != nil {
		t.Fatalf("write after reopen: %v", err)
	}
	if got, err := s.Applied(1, 0); err != nil || got != 2 {
		t.Fatalf("applied after reopen: %d, %v; want 2", got, err)
	}
	for range 3 {
		if err := next(); err != nil {
			t.Fatalf("id after reopen: %v", err)
		}
	}
}
