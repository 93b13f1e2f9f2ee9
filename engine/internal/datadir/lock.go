package datadir

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// LockFile is the data directory's lock file, held while an Engine is open.
const LockFile = "fluxgate.lock"

// Lock locks dir for one Engine, before anything in it is opened, so
// that a second server on the same directory stops with a sentence that says
// why, rather than with "resource temporarily unavailable" from the catalog's
// store. The lock is the one pebble takes on its own directories: a file lock
// that ends with the process.
func Lock(dir string) (io.Closer, error) {
	name := filepath.Join(dir, LockFile)
	// Open it first, so that a permission problem is reported as one.
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock data directory: %w", err)
	}
	f.Close()
	lock, err := vfs.Default.Lock(name)
	if err != nil {
		return nil, fmt.Errorf("data directory %s is in use by another fluxgate process (lock file %s)", dir, name)
	}
	return lock, nil
}
