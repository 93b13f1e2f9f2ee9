package kv

import (
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/testwait"
)

// disk is the real filesystem with a fault that tests set and clear: every
// write or sync of a file whose name ends with suffix fails with err.
type disk struct {
	vfs.FS
	fault atomic.Pointer[diskFault]
}

type diskFault struct {
	suffix string
	err    error
}

func newDisk() *disk {
	d := &disk{}
	d.FS = errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		f := d.fault.Load()
		if f == nil || !strings.HasSuffix(op.Path, f.suffix) {
			return nil
		}
		switch op.Kind {
		case errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
			return f.err
		}
		return nil
	}))
	return d
}

func (d *disk) fail(suffix string, err error) { d.fault.Store(&diskFault{suffix, err}) }
func (d *disk) heal()                         { d.fault.Store(nil) }

func writeApplied(s *Store, table int64, offset int64) error {
	txn := s.NewTxn()
	if err := txn.Set(RowKey(nil, table, 0, []byte("k")), []byte("v")); err != nil {
		txn.Abort()
		return err
	}
	if err := txn.SetApplied(table, 0, offset); err != nil {
		txn.Abort()
		return err
	}
	return txn.Commit()
}

// Reopening a store whose recovered log cannot be flushed (a full disk)
// used to wait in pebble.Open for ever; it is an error naming the cause.
func TestOpenOnFullDiskIsAnError(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeApplied(s, 1, 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	d := newDisk()
	d.fail(".sst", syscall.ENOSPC)
	opened := make(chan error, 1)
	go func() {
		s, err := Open(dir, Options{CacheBytes: 1 << 20, FS: d})
		if err == nil {
			s.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if !errs.Is(err, errs.ResourceExhausted) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("open on a full disk: %v, want resource exhausted caused by ENOSPC", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("open on a full disk did not return")
	}
	// The abandoned open goes on retrying, and closes the store once the
	// flush succeeds; then the directory opens again.
	d.heal()
	testwait.For(t, "the store opens again", func() bool {
		s, err := Open(dir, Options{CacheBytes: 1 << 20})
		if err != nil {
			return false
		}
		defer s.Close()
		got, err := s.Applied(1, 0)
		if err != nil || got != 7 {
			t.Fatalf("applied offset after reopening: %d, %v; want 7", got, err)
		}
		return true
	})
}

// While flushes fail, writes are refused at once with the cause (they would
// otherwise fill the memtables and stall); reads go on; once a flush
// succeeds, writes resume.
func TestWritesRefusedWhileFlushFails(t *testing.T) {
	d := newDisk()
	s, err := Open(t.TempDir(), Options{CacheBytes: 1 << 20, FS: d})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := writeApplied(s, 1, 1); err != nil {
		t.Fatal(err)
	}

	d.fail(".sst", syscall.ENOSPC)
	if _, err := s.db.AsyncFlush(); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "a failed flush is noticed", func() bool { return s.db.WriteErr() != nil })
	if err := writeApplied(s, 1, 2); !errs.Is(err, errs.ResourceExhausted) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write while flushes fail: %v, want resource exhausted caused by ENOSPC", err)
	}
	if got, err := s.Applied(1, 0); err != nil || got != 1 {
		t.Fatalf("read while flushes fail: %d, %v; want 1", got, err)
	}

	d.heal()
	testwait.For(t, "a flush succeeds", func() bool { return s.db.WriteErr() == nil })
	if err := writeApplied(s, 1, 3); err != nil {
		t.Fatalf("write once the disk works: %v", err)
	}
	if got, err := s.Applied(1, 0); err != nil || got != 3 {
		t.Fatalf("applied offset: %d, %v; want 3", got, err)
	}
}

// A failed write of pebble's log makes pebble call Fatalf: the commit fails
// with UNAVAILABLE naming the cause instead of crashing the process, later
// writes are refused the same way, and reads go on.
func TestFailedLogWriteFailsCommitWithoutCrash(t *testing.T) {
	d := newDisk()
	s, err := Open(t.TempDir(), Options{CacheBytes: 1 << 20, FS: d})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := writeApplied(s, 1, 1); err != nil {
		t.Fatal(err)
	}

	d.fail(".log", syscall.EIO)
	ids, err := s.IDs(1, 10, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ids.Next(); !errs.Is(err, errs.Unavailable) || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("synced write while the log fails: %v, want unavailable naming EIO", err)
	}
	d.heal()
	if err := writeApplied(s, 1, 2); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("write after the log failed: %v, want unavailable until reopened", err)
	}
	if got, err := s.Applied(1, 0); err != nil || got != 1 {
		t.Fatalf("read after the log failed: %d, %v; want 1", got, err)
	}
}
