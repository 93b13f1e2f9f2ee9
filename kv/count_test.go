package kv

import (
	"maps"
	"testing"
)

// A txn's row count changes add up across commits, per bucket, and go with
// ResetBucket and DropTable.
func TestCountRows(t *testing.T) {
	s, err := Open(t.TempDir(), Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, deltas := range [][2]int64{{3, 1}, {-1, 0}, {2, 5}} {
		txn := s.NewTxn()
		txn.CountRows(7, 0, deltas[0])
		txn.CountRows(7, 1, deltas[1])
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	aborted := s.NewTxn()
	aborted.CountRows(7, 0, 100)
	aborted.Abort()
	wantCount(t, s, 7, 0, 4, true)
	wantCount(t, s, 7, 1, 6, true)
	wantCount(t, s, 7, 2, 0, false)

	if err := s.ResetBucket(7, 0); err != nil {
		t.Fatal(err)
	}
	wantCount(t, s, 7, 0, 0, false)
	if err := s.DropTable(7); err != nil {
		t.Fatal(err)
	}
	wantCount(t, s, 7, 1, 0, false)
}

// CountBuckets counts the rows of the buckets that have no count, once: a
// bucket that has one keeps it.
func TestCountBuckets(t *testing.T) {
	s, err := Open(t.TempDir(), Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	txn := s.NewTxn()
	for _, k := range []string{"a", "b", "c"} {
		if err := txn.Set(RowKey(nil, 3, 1, []byte(k)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	txn.CountRows(3, 2, 5) // kept, though its rows are not there
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []map[int]int64{{0: 0, 1: 3}, nil} {
		counted, err := s.CountBuckets(3, 3)
		if err != nil || !maps.Equal(counted, want) {
			t.Fatalf("CountBuckets counted %v (%v), want %v", counted, err, want)
		}
	}
	wantCount(t, s, 3, 0, 0, true)
	wantCount(t, s, 3, 1, 3, true)
	wantCount(t, s, 3, 2, 5, true)
}

func wantCount(t *testing.T, s *Store, table int64, bucket int, want int64, wantOK bool) {
	t.Helper()
	n, ok, err := s.RowCount(table, bucket)
	if err != nil || n != want || ok != wantOK {
		t.Errorf("table %d bucket %d: count %d, kept %v (%v); want %d, %v", table, bucket, n, ok, err, want, wantOK)
	}
}
