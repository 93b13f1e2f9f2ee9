// Package vfs is the filesystem seam of the log store and the ACL file: the
// few file operations they make, behind an interface, so that tests can make
// any of them fail (see Faults) where the real disk would fill up or fail.
// It does not cover the catalog or the kv store, which are pebble databases
// and take pebble's own vfs.FS.
package vfs

import (
	"io"
	"os"
)

// FS is a filesystem.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Remove(name string) error
	Rename(oldpath, newpath string) error
	MkdirAll(dir string, perm os.FileMode) error
	ReadDir(dir string) ([]os.DirEntry, error)
}

// File is an open file.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Writer
	io.Closer
	// WriteVecAt writes bufs back to back at off, without first copying
	// them into one buffer.
	WriteVecAt(bufs [][]byte, off int64) error
	Truncate(size int64) error
	Sync() error
	Stat() (os.FileInfo, error)
	Name() string
}

// Default is the operating system's filesystem.
var Default FS = osFS{}

// OrDefault returns fs, or Default when fs is nil: the zero value of an
// Options struct means the real disk.
func OrDefault(fs FS) FS {
	if fs == nil {
		return Default
	}
	return fs
}

// ReadFile reads a whole file.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, st.Size())
	n, err := f.ReadAt(b, 0)
	if err == io.EOF {
		err = nil
	}
	return b[:n], err
}

// WriteFile creates or replaces a file with data, without syncing it.
func WriteFile(fs FS, name string, data []byte, perm os.FileMode) error {
	f, err := fs.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteFileAtomic replaces a file with data so that a crash leaves either
// the old or the new content: it writes and syncs a temporary file beside
// it, renames it over the file and syncs the directory.
func WriteFileAtomic(fs FS, name string, data []byte, perm os.FileMode) error {
	tmp := name + ".tmp"
	f, err := fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, name)
	}
	if err != nil {
		fs.Remove(tmp) // best effort: the error that matters is err
		return err
	}
	return SyncDir(fs, dirOf(name))
}

// SyncDir fsyncs a directory, making the creation, removal and renaming of
// its entries durable.
func SyncDir(fs FS, dir string) error {
	d, err := fs.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func dirOf(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if os.IsPathSeparator(name[i]) {
			if i == 0 {
				return name[:1]
			}
			return name[:i]
		}
	}
	return "."
}
