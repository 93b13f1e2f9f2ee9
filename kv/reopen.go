package kv

import (
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/pebbledb"
)

// Broken reports whether a write of pebble's log failed: the store then
// refuses writes until Reopen.
func (s *Store) Broken() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db.Broken()
}

// Reopen recovers a broken store once its disk works again: it closes the
// broken pebble instance and opens the directory again, which recovers the
// durable state (the state committed since the last sync may be gone; the
// changelog has it). catchUp is called with the reopened store before any
// other reader sees it, to replay that changelog. The caller quiesces every
// writer first; a Txn begun before fails at its next use. While the disk
// still fails, Reopen returns the error and leaves the store as it was,
// readable; so it does while readers keep the store busy for lockWait.
func (s *Store) Reopen(catchUp func(*Store)) error {
	if !s.lockIdle() {
		return errs.New(errs.Unavailable, "primary-key state: reads kept it busy for %s; the next write tries to reopen it again", lockWait)
	}
	defer s.mu.Unlock()
	if !s.db.Broken() {
		return nil
	}
	if err := s.probe(); err != nil {
		return err
	}
	if err := s.db.CloseBroken(); err != nil {
		s.opts.Logger.Warn("closing the broken primary-key state", "err", err.Error())
	}
	s.db = s.reopen()
	catchUp(&Store{dir: s.dir, opts: s.opts, cache: s.cache, db: s.db})
	return nil
}

// lockWait bounds how long Reopen waits for the store's readers to finish.
const lockWait = 2 * time.Second

// lockIdle takes mu exclusively once no reader holds it, trying for up to
// lockWait. Unlike Lock it does not hold off new readers while it waits: a
// snapshot read lasts as long as its client takes to read it.
func (s *Store) lockIdle() bool {
	deadline := time.Now().Add(lockWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		if s.mu.TryLock() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
}

// probe writes and syncs a small file beside the store's: the broken
// instance is closed only once that works, since after closing it the store
// has no database until the open succeeds.
func (s *Store) probe() error {
	name := filepath.Join(s.dir, "probe.tmp")
	f, err := s.opts.FS.Create(name, vfs.WriteCategoryUnspecified)
	if err == nil {
		_, err = f.Write(make([]byte, 4096))
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return pebbledb.StorageError(err, "primary-key state: the disk still fails")
	}
	return s.opts.FS.Remove(name)
}

// maxReopenBackoff bounds the pause between attempts to open the store
// again.
const maxReopenBackoff = 5 * time.Second

// reopen opens the directory of a closed store, trying again with back-off
// until it succeeds: the probe has just shown the disk works, and without a
// database the store cannot serve reads either.
func (s *Store) reopen() *pebbledb.DB {
	pause := 10 * time.Millisecond
	for {
		db, err := s.open()
		if err == nil {
			s.opts.Logger.Info("primary-key state reopened: writes resume")
			return db
		}
		s.opts.Logger.Error("reopen the primary-key state", "err", err.Error(), "retry_in", pause)
		time.Sleep(pause)
		pause = min(2*pause, maxReopenBackoff)
	}
}
