package fsio

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/internal/diskfault"
)

func TestWriteFileAtomicKeepsOldContentOnFailure(t *testing.T) {
	dir := t.TempDir()
	fs := diskfault.New(vfs.Default)
	name := filepath.Join(dir, "acl.json")
	if err := WriteFileAtomic(fs, name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs.Set(diskfault.Sync, ".tmp", syscall.EIO)
	if err := WriteFileAtomic(fs, name, []byte("new"), 0o600); !errors.Is(err, syscall.EIO) {
		t.Fatalf("WriteFileAtomic with a failing fsync: %v", err)
	}
	got, err := ReadFile(fs, name)
	if err != nil || string(got) != "old" {
		t.Fatalf("after a failed replace: %q, %v", got, err)
	}
	if _, err := os.Stat(name + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
}

// Files are made with no more permissions than asked: the grants file is
// its owner's only, as os.WriteFile(name, data, 0o600) would leave it.
func TestWritesKeepToTheirPermissions(t *testing.T) {
	dir := t.TempDir()
	for _, write := range []func(vfs.FS, string, []byte, os.FileMode) error{WriteFile, WriteFileAtomic} {
		for _, perm := range []os.FileMode{0o600, 0o644} {
			name := filepath.Join(dir, "f")
			if err := write(vfs.Default, name, []byte("x"), perm); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got&^perm != 0 {
				t.Fatalf("asked for %v, the file has %v", perm, got)
			}
		}
	}
}

// Truncate cuts a file of the real disk, also through errorfs; a file of
// vfs.NewMem cannot be, and says so.
func TestTruncate(t *testing.T) {
	dir := t.TempDir()
	for _, fs := range []vfs.FS{vfs.Default, diskfault.New(vfs.Default)} {
		name := filepath.Join(dir, "f")
		if err := WriteFile(fs, name, []byte("abcdef"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := fs.OpenReadWrite(name, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		err = Truncate(f, 2)
		f.Close()
		if err != nil {
			t.Fatalf("%T: %v", fs, err)
		}
		if got, err := ReadFile(fs, name); err != nil || !bytes.Equal(got, []byte("ab")) {
			t.Fatalf("%T: after the cut %q, %v", fs, got, err)
		}
	}
	mem := vfs.NewMem()
	f, err := mem.Create("f", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Truncate(f, 0); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("truncating a file of vfs.NewMem: %v, want unsupported", err)
	}
}

func TestSyncDirAndReadFileOnMem(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(fs, fs.PathJoin("d", "f"), []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(fs, fs.PathJoin("d", "f")); err != nil || string(got) != "abc" {
		t.Fatalf("read back %q, %v", got, err)
	}
	if _, err := ReadFile(fs, "missing"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reading a missing file: %v, want not exist", err)
	}
}
