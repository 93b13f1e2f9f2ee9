package producer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/diskfault"
)

func TestRegisterOnceGetDeleteAndReopen(t *testing.T) {
	fs, path := memDir(t)
	s, err := Open(fs, path)
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

	s, err = Open(fs, path) // durable across a restart
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
	s, err = Open(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("job-1", "d.t", 8); ok {
		t.Fatal("deleted offsets came back after reopen")
	}
}

// memDir returns a filesystem in memory with an empty directory: for the
// tests that need a filesystem, not the disk (a torn or damaged file is
// made, and cut, on the disk).
func memDir(t *testing.T) (vfs.FS, string) {
	t.Helper()
	fs := vfs.NewMem()
	if err := fs.MkdirAll("data", 0o755); err != nil {
		t.Fatal(err)
	}
	return fs, "data"
}

func open(t *testing.T, fsys vfs.FS, dir string) *Store {
	t.Helper()
	s, err := Open(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func register(t *testing.T, s *Store, producer string, offset int64) {
	t.Helper()
	if created, err := s.Register(producer, "d.t", Offsets{TableID: 1, Buckets: map[int]int64{0: offset}}); err != nil || !created {
		t.Fatalf("register %s: created %v, %v", producer, created, err)
	}
}

func wantOffset(t *testing.T, s *Store, producer string, offset int64) {
	t.Helper()
	got, ok := s.Get(producer, "d.t", 1)
	if offset < 0 {
		if ok {
			t.Errorf("%s: offsets %v, want none", producer, got)
		}
		return
	}
	if !ok || got.Buckets[0] != offset {
		t.Errorf("%s: offsets %v (%v), want bucket 0 at %d", producer, got, ok, offset)
	}
}

// A crash while appending leaves the last record torn (part of it, no
// newline; or zeros): it was never acknowledged, so Open cuts it and
// keeps every record before it, and the log goes on from there.
func TestTornLastRecordIsCut(t *testing.T) {
	for _, tail := range []string{`1a2b3c4d {"producer_id":"job-2","ta`, "\x00\x00\x00\x00", `00000000 {"producer_id":"job-2"}` + "\n"} {
		dir := t.TempDir()
		s := open(t, vfs.Default, dir)
		register(t, s, "job-1", 10)
		s.Close()
		path := filepath.Join(dir, FileName)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := f.Stat()
		f.WriteString(tail)
		f.Close()

		s = open(t, vfs.Default, dir)
		wantOffset(t, s, "job-1", 10)
		wantOffset(t, s, "job-2", -1)
		if after, _ := os.Stat(path); after.Size() != before.Size() {
			t.Errorf("tail %q: the log is %d bytes after open, want it cut to %d", tail, after.Size(), before.Size())
		}
		register(t, s, "job-3", 30)
		s.Close()
		s = open(t, vfs.Default, dir)
		wantOffset(t, s, "job-1", 10)
		wantOffset(t, s, "job-3", 30)
	}
}

// A damaged record that good ones follow is no crash: Open refuses with
// DATA_LOSS naming the file and byte, and changes nothing.
func TestDamagedRecordRefusesToOpen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, vfs.Default, dir)
	register(t, s, "job-1", 10)
	register(t, s, "job-2", 20)
	s.Close()
	path := filepath.Join(dir, FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := strings.Replace(string(data), `"job-1"`, `"job-9"`, 1)
	if err := os.WriteFile(path, []byte(damaged), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(vfs.Default, dir)
	if !errs.Is(err, errs.DataLoss) || !strings.Contains(err.Error(), path+" are damaged at byte 0") {
		t.Fatalf("open: %v, want DATA_LOSS naming %s at byte 0", err, path)
	}
	if after, _ := os.ReadFile(path); string(after) != damaged {
		t.Error("the refused open changed the file")
	}
}

// Changes append one record each; the log is rewritten with the live
// entries once most of it is obsolete, so it stays within a bound of them,
// and reopening restores every live entry.
func TestLogStaysBoundedAndReopens(t *testing.T) {
	fs, dir := memDir(t)
	s := open(t, fs, dir)
	for i := range 40 {
		register(t, s, fmt.Sprint("kept-", i), int64(i))
	}
	for round := range 50 {
		p := fmt.Sprint("churn-", round)
		register(t, s, p, 1)
		if err := s.Delete(p, "d.t"); err != nil {
			t.Fatal(err)
		}
		if s.mu.records > 3*len(s.mu.byKey)+64+1 {
			t.Fatalf("round %d: the log holds %d records for %d live entries", round, s.mu.records, len(s.mu.byKey))
		}
	}
	s.Close()
	s = open(t, fs, dir)
	for i := range 40 {
		wantOffset(t, s, fmt.Sprint("kept-", i), int64(i))
	}
	wantOffset(t, s, "churn-49", -1)
}

// A failed append (here its sync) is an error and changes nothing, also
// after a restart; the next change succeeds once the disk does.
func TestFailedAppendChangesNothing(t *testing.T) {
	fs, dir := memDir(t)
	faults := diskfault.New(fs)
	s := open(t, faults, dir)
	register(t, s, "job-1", 10)
	faults.Set(diskfault.Sync, FileName, &os.PathError{Op: "sync", Path: FileName, Err: syscall.EIO})
	if _, err := s.Register("job-2", "d.t", Offsets{TableID: 1, Buckets: map[int]int64{0: 20}}); err == nil {
		t.Fatal("a registration whose sync failed succeeded")
	}
	wantOffset(t, s, "job-2", -1)
	faults.Clear()
	register(t, s, "job-3", 30)
	s.Close()
	s = open(t, fs, dir)
	wantOffset(t, s, "job-1", 10)
	wantOffset(t, s, "job-2", -1)
	wantOffset(t, s, "job-3", 30)
}

// The producers.json of earlier versions is taken over at start.
func TestLegacyFileIsTakenOver(t *testing.T) {
	dir := t.TempDir()
	legacy := `[{"producer_id":"job-1","table":"d.t","table_id":1,"buckets":{"0":10}}]`
	if err := os.WriteFile(filepath.Join(dir, "producers.json"), []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, vfs.Default, dir)
	wantOffset(t, s, "job-1", 10)
	if _, err := os.Stat(filepath.Join(dir, "producers.json")); !os.IsNotExist(err) {
		t.Errorf("producers.json is still there (%v)", err)
	}
	s.Close()
	wantOffset(t, open(t, vfs.Default, dir), "job-1", 10)
}
