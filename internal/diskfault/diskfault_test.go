package diskfault

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestFaultsFailChosenOpsUntilCleared(t *testing.T) {
	dir := t.TempDir()
	fs := New(vfs.Default)
	log := filepath.Join(dir, "0.log")
	f, err := fs.OpenReadWrite(log, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	fs.Set(Write, ".log", syscall.ENOSPC)
	fs.Set(Sync, ".log", syscall.EIO)
	fs.Set(Read, ".log", syscall.EIO)
	var pathErr *os.PathError
	if _, err := f.WriteAt([]byte("abcd"), 0); !errors.Is(err, syscall.ENOSPC) || !errors.As(err, &pathErr) || pathErr.Path != log {
		t.Fatalf("WriteAt under ENOSPC: %v, want ENOSPC naming the file", err)
	}
	if _, err := f.Write([]byte("abcd")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Write under ENOSPC: %v", err)
	}
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync under EIO: %v", err)
	}
	if _, err := f.ReadAt(make([]byte, 1), 0); !errors.Is(err, syscall.EIO) {
		t.Fatalf("ReadAt under EIO: %v", err)
	}
	other, err := fs.Create(filepath.Join(dir, "other"), vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Write([]byte("x")); err != nil {
		t.Fatalf("a path the faults do not match: %v", err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}

	fs.Clear()
	if _, err := f.WriteAt([]byte("abcd"), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := f.ReadAt(got, 0); err != nil || string(got) != "abcd" {
		t.Fatalf("read back %q, %v", got, err)
	}
}
