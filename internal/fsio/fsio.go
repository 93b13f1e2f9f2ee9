// Package fsio is what the log store, the producer offsets and the grants
// file do with files beyond pebble's vfs.FS, written once over it: read or
// write a whole file, replace one atomically, sync a directory, truncate an
// open file. The filesystem seam itself is pebble's vfs.FS: vfs.Default on
// the real disk, errorfs to make chosen operations fail in tests, vfs.NewMem
// where a test needs only a filesystem.
package fsio

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"
)

// ReadFile reads a whole file.
func ReadFile(fs vfs.FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
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

// WriteFile creates or replaces a file with data, without syncing it. The
// file has at most the permissions perm (less the umask).
func WriteFile(fs vfs.FS, name string, data []byte, perm os.FileMode) error {
	f, err := create(fs, name, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// WriteFileAtomic replaces a file with data so that a crash leaves either
// the old or the new content: it writes and syncs a temporary file beside
// it, renames it over the file and syncs the directory. The file has at
// most the permissions perm (less the umask).
func WriteFileAtomic(fs vfs.FS, name string, data []byte, perm os.FileMode) error {
	tmp := name + ".tmp"
	f, err := create(fs, tmp, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = fs.Rename(tmp, name)
	}
	if err != nil {
		fs.Remove(tmp) // best effort: the error that matters is err
		return err
	}
	return SyncDir(fs, fs.PathDir(name))
}

// SyncDir fsyncs a directory, making the creation, removal and renaming of
// its entries durable.
func SyncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// Truncate cuts or extends an open file to size. pebble's vfs.File has no
// Truncate: a file of the real disk has its *os.File's, and one that errorfs
// wraps is reached through its descriptor (errorfs injects no fault into a
// truncation). A file of neither kind (vfs.NewMem's) cannot be truncated.
func Truncate(f vfs.File, size int64) error {
	if t, ok := f.(interface{ Truncate(int64) error }); ok {
		return t.Truncate(size)
	}
	if fd := f.Fd(); fd != vfs.InvalidFd {
		if err := unix.Ftruncate(int(fd), size); err != nil {
			return fmt.Errorf("ftruncate: %w", err)
		}
		return nil
	}
	return fmt.Errorf("truncate: %w", errors.ErrUnsupported)
}

// create creates (or replaces) a file for writing, with at most the
// permissions perm: pebble's Create makes files 0666 less the umask, as
// os.Create does, and a file of the real disk is then narrowed to perm.
func create(fs vfs.FS, name string, perm os.FileMode) (vfs.File, error) {
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	if err := restrict(f, perm); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func restrict(f vfs.File, perm os.FileMode) error {
	fd := f.Fd()
	if fd == vfs.InvalidFd {
		return nil // not a file of the operating system: it has no permissions
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if mode := st.Mode().Perm(); mode&^perm != 0 {
		return unix.Fchmod(int(fd), uint32(mode&perm))
	}
	return nil
}
