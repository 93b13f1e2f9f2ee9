package pebbledb

import (
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// walWatch is a filesystem that reports failed writes and syncs of pebble's
// log (its *.log files) to the health as they happen. pebble writes its log
// on a goroutine of its own and meets the failure only at a later commit,
// where it panics (in some paths beyond recovery, such as a log rotation);
// refusing writes from the moment the log fails keeps commits out of those
// paths.
type walWatch struct {
	vfs.FS
	h *health
}

func (w walWatch) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := w.FS.Create(name, category)
	return w.watch(name, f), err
}

func (w walWatch) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := w.FS.ReuseForWrite(oldname, newname, category)
	return w.watch(newname, f), err
}

func (w walWatch) Unwrap() vfs.FS { return w.FS }

func (w walWatch) watch(name string, f vfs.File) vfs.File {
	if f == nil || !strings.HasSuffix(name, ".log") {
		return f
	}
	return walFile{File: f, h: w.h}
}

type walFile struct {
	vfs.File
	h *health
}

func (f walFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	return n, f.h.logFailed(err)
}

func (f walFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	return n, f.h.logFailed(err)
}

func (f walFile) Sync() error     { return f.h.logFailed(f.File.Sync()) }
func (f walFile) SyncData() error { return f.h.logFailed(f.File.SyncData()) }

func (f walFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	return full, f.h.logFailed(err)
}
