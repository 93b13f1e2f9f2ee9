package producer

import (
	"path/filepath"
	"testing"

	"github.com/fluxgate-io/fluxgate/internal/vfs"
)

func TestRegisterOnceGetDeleteAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "producers.json")
	s, err := Open(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	first := Offsets{TableID: 7, Buckets: map[int]int64{0: 10, 1: 3}}
	if created, err := s.Register("job-1", "d.t", first); err != nil || !created {
		t.Fatalf("first register: created %v, err %v; want created", created, err)
	}
	// A second registration keeps the first: it is what a retry must undo to.
	if created, err := s.Register("job-1", "d.t", Offsets{TableID: 7, Buckets: map[int]int64{0: 99, 1: 99}}); err != nil || created {
		t.Fatalf("second register: created %v, err %v; want kept", created, err)
	}

	s, err = Open(vfs.Default, path) // durable across a restart
	if err != nil {
		t.Fatal(err)
	}
	got, ok := s.Get("job-1", "d.t", 7)
	if !ok || got.Buckets[0] != 10 || got.Buckets[1] != 3 {
		t.Fatalf("after reopen: %v %v, want the first offsets", got, ok)
	}
	if _, ok := s.Get("job-1", "d.t", 8); ok {
		t.Fatal("offsets of a dropped table were returned for its successor")
	}
	if created, err := s.Register("job-1", "d.t", Offsets{TableID: 8, Buckets: map[int]int64{0: 0}}); err != nil || !created {
		t.Fatalf("register for a new table of the same name: created %v, err %v", created, err)
	}

	if err := s.Delete("job-1", "d.t"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("job-1", "d.t"); err != nil {
		t.Fatalf("deleting nothing: %v", err)
	}
	s, err = Open(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("job-1", "d.t", 8); ok {
		t.Fatal("deleted offsets came back after reopen")
	}
}
