// Package diskfault is, for tests, a filesystem whose faults a test sets and
// clears: pebble's errorfs over another filesystem, with an injector that
// fails chosen kinds of operations (reads, writes, syncs) on chosen paths
// with a chosen error, such as ENOSPC for a full disk or EIO for a failed
// fsync, until the test clears them and watches the code above recover.
package diskfault

import (
	"os"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// Op is a kind of file operation that FS can make fail.
type Op int

const (
	Read  Op = iota // reading a file (Read, ReadAt)
	Write           // writing a file (Write, WriteAt)
	Sync            // syncing a file or a directory (Sync, SyncData, SyncTo)
)

var opNames = [...]string{"read", "write", "sync"}

func (op Op) String() string { return opNames[op] }

// of returns the Op an errorfs operation is, and false for the operations
// FS never fails.
func of(kind errorfs.OpKind) (Op, bool) {
	switch kind {
	case errorfs.OpFileRead, errorfs.OpFileReadAt:
		return Read, true
	case errorfs.OpFileWrite, errorfs.OpFileWriteAt:
		return Write, true
	case errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
		return Sync, true
	}
	return 0, false
}

// FS is a filesystem that fails the operations a test chose, by kind and
// path, until told otherwise. It is safe for concurrent use.
type FS struct {
	*errorfs.FS

	mu    sync.Mutex
	rules []rule
}

type rule struct {
	op    Op
	match string // a substring of the path; "" matches every path
	err   error
}

// New returns fs with no faults set yet.
func New(fs vfs.FS) *FS {
	f := &FS{}
	f.FS = errorfs.Wrap(fs, f)
	return f
}

// Set makes every op on a path containing match fail with err (a
// syscall.Errno such as syscall.ENOSPC), wrapped in an *os.PathError as the
// os package would.
func (f *FS) Set(op Op, match string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, rule{op, match, err})
}

// Clear removes every fault: the disk is healthy again.
func (f *FS) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// MaybeError is FS's errorfs.Injector.
func (f *FS) MaybeError(o errorfs.Op) error {
	op, ok := of(o.Kind)
	if !ok {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.rules {
		if r.op == op && strings.Contains(o.Path, r.match) {
			return &os.PathError{Op: op.String(), Path: o.Path, Err: r.err}
		}
	}
	return nil
}

// String describes the faults set, as errorfs.Injector asks.
func (f *FS) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	for i, r := range f.rules {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.op.String() + " " + r.match + ": " + r.err.Error())
	}
	return b.String()
}
