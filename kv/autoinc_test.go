package kv

import (
	"math"
	"testing"

	"github.com/fluxgate-io/fluxgate/errs"
)

// Ids are dense while the store is open, never reissued after a reopen, and
// a reopen skips at most one block.
func TestIDsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := s.IDs(7, 10, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	for want := int64(1); want <= 13; want++ {
		if got, err := ids.Next(); err != nil || got != want {
			t.Fatalf("id %d, %v; want %d", got, err, want)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ids, err = s.IDs(7, 10, math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	got, err := ids.Next()
	if err != nil || got <= 13 || got > 13+10 {
		t.Fatalf("first id after reopen %d (%v), want in (13, 23]", got, err)
	}
	other, err := s.IDs(8, 10, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := other.Next(); got != 1 {
		t.Fatalf("another table's first id is %d, want 1", got)
	}
}

func TestIDsRunOut(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids, err := s.IDs(1, 100, 3)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := ids.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ids.Next(); errs.KindOf(err) != errs.ResourceExhausted {
		t.Fatalf("id beyond the column's range: %v, want an exhausted error", err)
	}
}
