package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestFaultsFailChosenOpsUntilCleared(t *testing.T) {
	dir := t.TempDir()
	fs := NewFaults(Default)
	log := filepath.Join(dir, "0.log")
	f, err := fs.OpenFile(log, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	fs.Set(OpWrite, ".log", syscall.ENOSPC)
	fs.Set(OpSync, ".log", syscall.EIO)
	if err := f.WriteVecAt([][]byte{[]byte("ab"), []byte("cd")}, 0); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("WriteVecAt under ENOSPC: %v", err)
	}
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync under EIO: %v", err)
	}
	if err := WriteFile(fs, filepath.Join(dir, "other"), []byte("x"), 0o644); err != nil {
		t.Fatalf("a path the faults do not match: %v", err)
	}

	fs.Clear()
	if err := f.WriteVecAt([][]byte{[]byte("ab"), []byte("cd")}, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(fs, log)
	if err != nil || string(got) != "abcd" {
		t.Fatalf("read back %q, %v", got, err)
	}
}

func TestWriteFileAtomicKeepsOldContentOnFailure(t *testing.T) {
	dir := t.TempDir()
	fs := NewFaults(Default)
	name := filepath.Join(dir, "acl.json")
	if err := WriteFileAtomic(fs, name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs.Set(OpSync, ".tmp", syscall.EIO)
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
