package vfs

import (
	"os"
	"strings"
	"sync"
)

// Op is a kind of file operation that Faults can make fail.
type Op int

const (
	OpOpen     Op = iota // opening or creating a file or directory
	OpRead               // reading a file
	OpWrite              // writing a file (WriteAt, Write, WriteVecAt)
	OpSync               // fsync of a file or directory
	OpTruncate           // truncating a file
	OpRemove             // removing a file
	OpRename             // renaming a file (matched on the old path)
	OpMkdir              // creating directories
	OpReadDir            // listing a directory
	numOps
)

var opNames = [...]string{"open", "read", "write", "sync", "truncate", "remove", "rename", "mkdir", "readdir"}

func (op Op) String() string { return opNames[op] }

// Faults wraps a filesystem and makes chosen operations fail, by operation
// and path, until told otherwise: a test sets ENOSPC on writes, EIO on
// reads or a failed fsync, watches what the code above does, clears the
// fault and watches it recover. It is safe for concurrent use.
type Faults struct {
	fs FS

	mu    sync.Mutex
	rules []rule
}

type rule struct {
	op    Op
	match string // a substring of the path; "" matches every path
	err   error
}

// NewFaults returns fs with no faults set yet.
func NewFaults(fs FS) *Faults { return &Faults{fs: OrDefault(fs)} }

// Set makes every op on a path containing match fail with err (a
// syscall.Errno such as syscall.ENOSPC, wrapped in an *os.PathError as the
// os package would).
func (f *Faults) Set(op Op, match string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, rule{op, match, err})
}

// Clear removes every fault: the disk is healthy again.
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

func (f *Faults) check(op Op, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.rules {
		if r.op == op && strings.Contains(path, r.match) {
			return &os.PathError{Op: op.String(), Path: path, Err: r.err}
		}
	}
	return nil
}

func (f *Faults) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	if err := f.check(OpOpen, name); err != nil {
		return nil, err
	}
	file, err := f.fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return faultyFile{file, f}, nil
}

func (f *Faults) Remove(name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return err
	}
	return f.fs.Remove(name)
}

func (f *Faults) Rename(oldpath, newpath string) error {
	if err := f.check(OpRename, oldpath); err != nil {
		return err
	}
	return f.fs.Rename(oldpath, newpath)
}

func (f *Faults) MkdirAll(dir string, perm os.FileMode) error {
	if err := f.check(OpMkdir, dir); err != nil {
		return err
	}
	return f.fs.MkdirAll(dir, perm)
}

func (f *Faults) ReadDir(dir string) ([]os.DirEntry, error) {
	if err := f.check(OpReadDir, dir); err != nil {
		return nil, err
	}
	return f.fs.ReadDir(dir)
}

type faultyFile struct {
	File
	faults *Faults
}

func (f faultyFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.faults.check(OpRead, f.Name()); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f faultyFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.faults.check(OpWrite, f.Name()); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f faultyFile) Write(p []byte) (int, error) {
	if err := f.faults.check(OpWrite, f.Name()); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f faultyFile) WriteVecAt(bufs [][]byte, off int64) error {
	if err := f.faults.check(OpWrite, f.Name()); err != nil {
		return err
	}
	return f.File.WriteVecAt(bufs, off)
}

func (f faultyFile) Truncate(size int64) error {
	if err := f.faults.check(OpTruncate, f.Name()); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

func (f faultyFile) Sync() error {
	if err := f.faults.check(OpSync, f.Name()); err != nil {
		return err
	}
	return f.File.Sync()
}
