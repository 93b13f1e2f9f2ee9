package logstore

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/internal/fsio"
)

// FileCache keeps the segment files of logs open within a budget of
// descriptors, as pebble's table cache does for its tables: a segment holds
// a cachedFile, which opens its file when it is used and leaves it open,
// unused, for the next use; when the budget is reached the least recently
// used idle file is closed. A file is never closed while an operation uses
// it, so the budget is exceeded only by the operations under way (each
// read, write or fsync uses one file for its duration, and may be closing
// one to make room for it), never by idle buckets: their number does not
// matter.
//
// A log file with writes not yet synced is synced before it is closed, and a
// failure there is reported by the file's next Sync, so that the table's
// sync round fails as if it had made that fsync itself.
type FileCache struct {
	capacity int

	mu      sync.Mutex
	open    int        // descriptors open (in use, idle or being closed) or being opened
	closing int        // of those, being closed to make room
	idle    cachedFile // the ring of files open and unused, the most recently used next
}

// DefaultCachedFiles is the budget of a log opened without a FileCache.
const DefaultCachedFiles = 1024

// NewFileCache returns a cache that keeps at most capacity files open (at
// least one), besides the operations under way.
func NewFileCache(capacity int) *FileCache {
	c := &FileCache{capacity: max(capacity, 1)}
	c.idle.prev, c.idle.next = &c.idle, &c.idle
	return c
}

// Open reports the descriptors the cache has open.
func (c *FileCache) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// cachedFile is one file opened through a FileCache. It has the file
// operations of a segment; each opens the file if it is not open.
type cachedFile struct {
	cache  *FileCache
	fs     vfs.FS
	path   string
	create bool // until the file first opened: then a file gone is an error, not a new file
	log    bool // synced before it is closed, if written since its last sync

	// Guarded by cache.mu.
	f          vfs.File
	refs       int         // operations under way (and a hold, see keepOpen)
	prev, next *cachedFile // in the cache's idle ring while open and unused, else nil
	// busy is closed when the file, being opened or closed, is done: who
	// wants it meanwhile waits.
	busy            chan struct{}
	written, synced uint64 // writes made, and of those, made durable by an fsync
	syncErr         error  // an fsync that failed: the file's data since its last good fsync may be lost
	held            bool   // keepOpen's reference is taken
	closed          bool
}

// openCached opens (creating it if needed) a file through the cache. log
// marks a segment's log file, whose writes must be synced before it closes.
func openCached(cache *FileCache, fsys vfs.FS, path string, log bool) (*cachedFile, error) {
	cf := &cachedFile{cache: cache, fs: fsys, path: path, create: true, log: log}
	if _, err := cf.acquire(); err != nil {
		return nil, err
	}
	cf.release(false)
	return cf, nil
}

// acquire returns the open file for one operation, opening it if needed;
// release ends the operation.
func (cf *cachedFile) acquire() (vfs.File, error) {
	c := cf.cache
	for {
		c.mu.Lock()
		switch {
		case cf.closed:
			c.mu.Unlock()
			return nil, os.ErrClosed
		case cf.busy != nil: // being opened, or closed to make room
			busy := cf.busy
			c.mu.Unlock()
			<-busy
			continue
		case cf.f != nil:
			if cf.refs == 0 {
				cf.unlinkLocked()
			}
			cf.refs++
			f := cf.f
			c.mu.Unlock()
			return f, nil
		}
		cf.busy = make(chan struct{})
		victims := c.makeRoomLocked()
		c.open++
		c.mu.Unlock()

		for _, v := range victims {
			v.evict()
		}
		f, existed, err := cf.open()

		c.mu.Lock()
		close(cf.busy)
		cf.busy = nil
		if err == nil && cf.closed {
			f.Close()
			err = os.ErrClosed
		}
		if err != nil {
			c.open--
			c.mu.Unlock()
			return nil, err
		}
		cf.f, cf.refs = f, cf.refs+1
		if existed {
			// Until it is first synced, it may hold writes of a process
			// that crashed before syncing them.
			cf.written++
		}
		cf.create = false
		c.mu.Unlock()
		return f, nil
	}
}

// open opens the file for reading and writing, creating it on the first
// open only; existed says that the first open found it. pebble's FS opens
// for writing only with O_CREATE, so whether the file is there is asked
// first: a segment's files are removed only while held open (see
// segment.remove), so no reopen can create them again in between.
func (cf *cachedFile) open() (f vfs.File, existed bool, err error) {
	if _, err = cf.fs.Stat(cf.path); err == nil {
		existed = cf.create
	} else if !cf.create || !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	f, err = cf.fs.OpenReadWrite(cf.path, vfs.WriteCategoryUnspecified)
	return f, existed, err
}

// release ends an operation; wrote says it changed the file.
func (cf *cachedFile) release(wrote bool) {
	c := cf.cache
	c.mu.Lock()
	if wrote {
		cf.written++
	}
	cf.refs--
	switch {
	case cf.refs > 0:
	case !cf.closed:
		cf.prev, cf.next = &c.idle, c.idle.next
		cf.prev.next, cf.next.prev = cf, cf
	default: // Close left the file to its last operation
		f := cf.f
		cf.f = nil
		c.open--
		c.mu.Unlock()
		f.Close()
		return
	}
	c.mu.Unlock()
}

// unlinkLocked takes the file off the idle ring. Called with cache.mu held.
func (cf *cachedFile) unlinkLocked() {
	cf.prev.next, cf.next.prev = cf.next, cf.prev
	cf.prev, cf.next = nil, nil
}

// makeRoomLocked takes idle files off the cache, least recently used first,
// until one more fits besides those being closed; the caller evicts them.
// Called with c.mu held.
func (c *FileCache) makeRoomLocked() []*cachedFile {
	var victims []*cachedFile
	for c.open-c.closing >= c.capacity && c.idle.prev != &c.idle {
		v := c.idle.prev
		v.unlinkLocked()
		v.busy = make(chan struct{})
		c.closing++
		victims = append(victims, v)
	}
	return victims
}

// evict closes a file makeRoomLocked took, syncing it first if it is a log
// file written since its last sync.
func (cf *cachedFile) evict() {
	c := cf.cache
	c.mu.Lock()
	f, written := cf.f, cf.written
	unsynced := cf.log && written > cf.synced && cf.syncErr == nil
	c.mu.Unlock()
	var err error
	if unsynced {
		err = f.Sync()
	}
	f.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	cf.noteSyncLocked(written, err)
	cf.f = nil
	c.open--
	c.closing--
	close(cf.busy)
	cf.busy = nil
}

// noteSyncLocked records an fsync made after written writes. Called with
// cache.mu held.
func (cf *cachedFile) noteSyncLocked(written uint64, err error) {
	if err != nil && cf.syncErr == nil {
		cf.syncErr = err
	}
	if err == nil {
		cf.synced = max(cf.synced, written)
	}
}

// Sync makes the file's writes durable. A file not written since its last
// good fsync (its own, or one made before the cache closed it) is not synced
// again; after a failed fsync every Sync fails.
func (cf *cachedFile) Sync() error {
	f, err := cf.acquire()
	if err != nil {
		return err
	}
	c := cf.cache
	c.mu.Lock()
	written, done, err := cf.written, cf.written == cf.synced, cf.syncErr
	c.mu.Unlock()
	if err == nil && !done {
		err = f.Sync()
		c.mu.Lock()
		cf.noteSyncLocked(written, err)
		c.mu.Unlock()
	}
	cf.release(false)
	return err
}

// keepOpen keeps the file open until Close, so that readers of a segment
// read on after its file is removed. It opens the file if it must, which
// fails if the file is gone already: readers then fail too.
func (cf *cachedFile) keepOpen() {
	if _, err := cf.acquire(); err != nil {
		return
	}
	c := cf.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if cf.held {
		cf.refs-- // one hold is enough
		return
	}
	cf.held = true
}

// Close closes the file once no operation uses it; later operations fail.
// It does not sync.
func (cf *cachedFile) Close() error {
	c := cf.cache
	c.mu.Lock()
	if cf.closed {
		c.mu.Unlock()
		return nil
	}
	cf.closed = true
	if cf.held {
		cf.held = false
		cf.refs--
	}
	if cf.f == nil || cf.refs > 0 || cf.busy != nil {
		c.mu.Unlock() // the last operation, or the one opening or evicting it, closes it
		return nil
	}
	if cf.next != nil {
		cf.unlinkLocked()
	}
	f := cf.f
	cf.f = nil
	c.open--
	c.mu.Unlock()
	return f.Close()
}

// Name returns the file's path.
func (cf *cachedFile) Name() string { return cf.path }

func (cf *cachedFile) ReadAt(p []byte, off int64) (int, error) {
	f, err := cf.acquire()
	if err != nil {
		return 0, err
	}
	defer cf.release(false)
	return f.ReadAt(p, off)
}

func (cf *cachedFile) WriteAt(p []byte, off int64) (int, error) {
	f, err := cf.acquire()
	if err != nil {
		return 0, err
	}
	defer cf.release(true)
	return f.WriteAt(p, off)
}

func (cf *cachedFile) WriteVecAt(bufs [][]byte, off int64) error {
	f, err := cf.acquire()
	if err != nil {
		return err
	}
	defer cf.release(true)
	return writeVecAt(f, bufs, off)
}

func (cf *cachedFile) Truncate(size int64) error {
	f, err := cf.acquire()
	if err != nil {
		return err
	}
	defer cf.release(true)
	return fsio.Truncate(f, size)
}

func (cf *cachedFile) Stat() (os.FileInfo, error) {
	f, err := cf.acquire()
	if err != nil {
		return nil, err
	}
	defer cf.release(false)
	return f.Stat()
}
