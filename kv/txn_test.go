package kv

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestTxnReadsItsOwnWritesAndCommitsWithOffset(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := func(i int) []byte { return RowKey(nil, 3, 1, fmt.Appendf(nil, "k%03d", i)) }

	txn := s.NewTxn()
	for i := range 10 {
		if err := txn.Set(key(i), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Delete(key(4)); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := txn.Get(key(3)); !ok || v[0] != 3 {
		t.Fatalf("txn does not see its own write: %v %v", v, ok)
	}
	if _, ok, _ := txn.Get(key(4)); ok {
		t.Fatal("txn sees a key it deleted")
	}
	if err := txn.SetApplied(3, 1, 42); err != nil {
		t.Fatal(err)
	}
	// Nothing is visible before Commit.
	if off, _ := s.Applied(3, 1); off != 0 {
		t.Fatalf("applied offset %d before commit", off)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}

	next := s.NewTxn()
	defer next.Abort()
	if err := next.Prefetch([][]byte{key(9), key(4), key(0), key(11)}); err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]bool{9: true, 4: false, 0: true, 11: false, 5: true} {
		if _, ok, err := next.Get(key(i)); ok != want || err != nil {
			t.Fatalf("key %d present %v (%v), want %v", i, ok, err, want)
		}
	}

	snap := s.Snapshot()
	defer snap.Close()
	if off, _ := snap.Applied(3, 1); off != 42 {
		t.Fatalf("applied offset %d, want 42", off)
	}
	n := 0
	if err := snap.Rows(3, 1, func(pk, _ []byte) error { n++; return nil }); err != nil || n != 9 {
		t.Fatalf("snapshot has %d rows (%v), want 9", n, err)
	}
	if err := s.DropTable(3); err != nil {
		t.Fatal(err)
	}
	snap2 := s.Snapshot()
	defer snap2.Close()
	n = 0
	snap2.Rows(3, 1, func(pk, _ []byte) error { n++; return nil })
	if off, _ := snap2.Applied(3, 1); n != 0 || off != 0 {
		t.Fatalf("after drop: %d rows, applied %d", n, off)
	}
}

// Prefetch steps or seeks between the keys it is asked for: whatever the
// gaps between them, and with repeats, it reads what point lookups read.
func TestPrefetchReadsWhatGetReads(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := func(i int) []byte { return RowKey(nil, 5, 0, fmt.Appendf(nil, "k%05d", i)) }
	const n = 2000
	stored := s.NewTxn()
	for i := 0; i < n; i += 3 { // every third key is stored
		if err := stored.Set(key(i), fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := stored.Commit(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		var keys [][]byte
		for range 1 + rng.IntN(200) {
			// Mostly near one another, sometimes far, sometimes past the end.
			keys = append(keys, key(rng.IntN(n+20)))
		}
		if round%2 == 0 {
			keys = append(keys, keys[0]) // a repeat
		}
		txn := s.NewTxn()
		if err := txn.Prefetch(keys); err != nil {
			t.Fatal(err)
		}
		fresh := s.NewTxn() // no prefetch: each Get reads the store
		for _, k := range keys {
			got, gotOK, _ := txn.Get(k)
			want, wantOK, _ := fresh.Get(k)
			if gotOK != wantOK || string(got) != string(want) {
				t.Fatalf("round %d, key %s: prefetched %q %v, stored %q %v", round, k, got, gotOK, want, wantOK)
			}
		}
		txn.Abort()
		fresh.Abort()
	}
}
