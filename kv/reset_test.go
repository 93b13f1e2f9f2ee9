package kv

import "testing"

// ResetBucket empties one bucket's rows and applied offset and leaves the
// table's other buckets as they were.
func TestResetBucket(t *testing.T) {
	s, err := Open(t.TempDir(), Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	txn := s.NewTxn()
	for b := range 2 {
		if err := txn.Set(RowKey(nil, 5, b, []byte("k")), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := txn.SetApplied(5, b, 10); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := s.ResetBucket(5, 0); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	defer snap.Close()
	for b, want := range []int64{0, 10} {
		rows := 0
		if err := snap.Rows(5, b, func(_, _ []byte) error { rows++; return nil }); err != nil {
			t.Fatal(err)
		}
		applied, err := snap.Applied(5, b)
		if err != nil {
			t.Fatal(err)
		}
		if wantRows := int(want / 10); rows != wantRows || applied != want {
			t.Errorf("bucket %d: %d rows, applied %d; want %d rows, applied %d", b, rows, applied, wantRows, want)
		}
	}
}

// MaxTableID finds the largest table id of any kind of key, and forgets a
// dropped table's.
func TestMaxTableID(t *testing.T) {
	s, err := Open(t.TempDir(), Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m, err := s.MaxTableID(); err != nil || m != 0 {
		t.Fatalf("empty store: %d (%v), want 0", m, err)
	}
	txn := s.NewTxn()
	if err := txn.Set(RowKey(nil, 4, 0, []byte("k")), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := txn.SetApplied(9, 0, 1); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if m, err := s.MaxTableID(); err != nil || m != 9 {
		t.Fatalf("max table id %d (%v), want 9", m, err)
	}
	if err := s.DropTable(9); err != nil {
		t.Fatal(err)
	}
	if m, err := s.MaxTableID(); err != nil || m != 4 {
		t.Fatalf("max table id after dropping 9: %d (%v), want 4", m, err)
	}
}
