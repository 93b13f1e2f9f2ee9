// Package producer keeps producer offsets: per (producer, table), the
// per-bucket log offsets a writer such as a Flink sink registers when it
// starts without state, so that a failed first attempt can be undone back to
// them by the next (Fluss's REGISTER/GET/DELETE_PRODUCER_OFFSETS, FIP-21
// undo recovery). It owns one small file in the data directory, rewritten
// atomically on every change; it does not know tables, only the ids it is
// given.
package producer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/fluxgate-io/fluxgate/internal/vfs"
)

// Offsets are the registered offsets of one producer for one table.
type Offsets struct {
	// TableID is the table's id when they were registered: a table dropped
	// and created again under its name does not inherit them.
	TableID int64         `json:"table_id"`
	Buckets map[int]int64 `json:"buckets"`
	// Partitions replaces Buckets for a partitioned table: partition name →
	// bucket → offset.
	Partitions map[string]map[int]int64 `json:"partitions,omitempty"`
}

// Store is the set of registered producer offsets. Safe for concurrent use.
type Store struct {
	fs   vfs.FS
	path string

	mu struct {
		sync.Mutex
		byKey map[key]Offsets
	}
}

type key struct{ producer, table string }

// entry is one record of the file.
type entry struct {
	Producer string `json:"producer_id"`
	Table    string `json:"table"`
	Offsets
}

// Open loads the store kept in path; a missing file is an empty store.
func Open(fsys vfs.FS, path string) (*Store, error) {
	s := &Store{fs: fsys, path: path}
	s.mu.byKey = map[key]Offsets{}
	data, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read producer offsets: %w", err)
	}
	var entries []entry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("decode producer offsets %s: %w", path, err)
	}
	for _, e := range entries {
		s.mu.byKey[key{e.Producer, e.Table}] = e.Offsets
	}
	return s, nil
}

// Register stores offsets under (producer, table) unless offsets of the same
// table id are there already; it reports whether it stored them. Of
// concurrent registrations exactly one stores.
func (s *Store) Register(producer, table string, offs Offsets) (created bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{producer, table}
	if old, ok := s.mu.byKey[k]; ok && old.TableID == offs.TableID {
		return false, nil
	}
	old, had := s.mu.byKey[k]
	s.mu.byKey[k] = offs
	if err := s.saveLocked(); err != nil {
		if had {
			s.mu.byKey[k] = old
		} else {
			delete(s.mu.byKey, k)
		}
		return false, err
	}
	return true, nil
}

// Get returns the offsets registered under (producer, table) for the table
// with tableID.
func (s *Store) Get(producer, table string, tableID int64) (Offsets, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	offs, ok := s.mu.byKey[key{producer, table}]
	if !ok || offs.TableID != tableID {
		return Offsets{}, false
	}
	return offs, true
}

// Delete removes the offsets under (producer, table); deleting none is no
// error.
func (s *Store) Delete(producer, table string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{producer, table}
	old, ok := s.mu.byKey[k]
	if !ok {
		return nil
	}
	delete(s.mu.byKey, k)
	if err := s.saveLocked(); err != nil {
		s.mu.byKey[k] = old
		return err
	}
	return nil
}

func (s *Store) saveLocked() error {
	entries := make([]entry, 0, len(s.mu.byKey))
	for k, offs := range s.mu.byKey {
		entries = append(entries, entry{Producer: k.producer, Table: k.table, Offsets: offs})
	}
	data, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	if err := vfs.WriteFileAtomic(s.fs, s.path, data, 0o644); err != nil {
		return fmt.Errorf("save producer offsets: %w", err)
	}
	return nil
}
