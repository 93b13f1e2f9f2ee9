// Package producer keeps producer offsets: per (producer, table), the
// per-bucket log offsets a writer such as a Flink sink registers when it
// starts without state, so that a failed first attempt can be undone back to
// them by the next (Fluss's REGISTER/GET/DELETE_PRODUCER_OFFSETS, FIP-21
// undo recovery). It owns one file in the data directory, an append-only
// log of changes, rewritten whole only when most of it is obsolete; it does
// not know tables, only the ids it is given.
package producer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/fsio"
)

// The file is a log of records, one a line: eight hex digits of the
// CRC-32C of the JSON that follows a space, then the JSON of an entry (a
// registration) or of a deletion ({"producer_id", "table", "deleted":
// true}). Later records replace earlier ones of the same (producer, table).
// A change is acknowledged once its record is synced. A crash can leave the
// last record torn (no newline, or a checksum that does not match): it was
// never acknowledged, and Open cuts it. A bad record before good ones is
// damage, not a crash: Open refuses it, naming the byte.

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
		// f is the log, open for appends from size on; nil until the
		// first change, and after a failed append, when the next change
		// rewrites the log first (dropping what the failure left).
		f       vfs.File
		size    int64
		records int // in the log, live or replaced
	}
}

type key struct{ producer, table string }

// entry is one record of the log.
type entry struct {
	Producer string `json:"producer_id"`
	Table    string `json:"table"`
	Deleted  bool   `json:"deleted,omitempty"`
	Offsets
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// FileName is the store's file in its directory, and legacyFileName the
// JSON array earlier versions rewrote whole on every change.
const (
	FileName       = "producers.log"
	legacyFileName = "producers.json"
)

// Open loads the store kept in dir; no file is an empty store. A torn last
// record (a crash while appending it) is cut. The file of earlier versions
// is turned into the log, then removed.
func Open(fsys vfs.FS, dir string) (*Store, error) {
	s := &Store{fs: fsys, path: filepath.Join(dir, FileName)}
	s.mu.byKey = map[key]Offsets{}
	data, err := fsio.ReadFile(fsys, s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, s.migrate(filepath.Join(dir, legacyFileName))
	}
	if err != nil {
		return nil, fmt.Errorf("read producer offsets: %w", err)
	}
	good, err := s.replay(data)
	if err != nil {
		return nil, err
	}
	if good < int64(len(data)) {
		if err := cut(fsys, s.path, good); err != nil {
			return nil, fmt.Errorf("cut the torn last record of %s at byte %d: %w", s.path, good, err)
		}
	}
	s.mu.size = good
	return s, nil
}

// migrate loads the legacy file at path, if there is one, writes the log
// of its entries and removes it.
func (s *Store) migrate(path string) error {
	data, err := fsio.ReadFile(s.fs, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read producer offsets: %w", err)
	}
	var entries []entry
	if err := json.Unmarshal(data, &entries); err != nil {
		return fmt.Errorf("decode producer offsets %s: %w", path, err)
	}
	for _, e := range entries {
		s.apply(e)
	}
	s.mu.Lock()
	if err = s.rewriteLocked(); err == nil {
		err = s.mu.f.Close() // opened again by the first change
		s.mu.f = nil
	}
	s.mu.Unlock()
	if err == nil {
		err = s.fs.Remove(path)
	}
	if err != nil {
		return fmt.Errorf("move producer offsets from %s to %s: %w", path, s.path, err)
	}
	return nil
}

// replay applies the log's records and returns the length of its intact
// part: all of it, or up to a torn last record.
func (s *Store) replay(data []byte) (int64, error) {
	var off int64
	for len(data) > 0 {
		line, rest, complete := bytes.Cut(data, []byte{'\n'})
		e, err := decode(line)
		if err != nil || !complete {
			if len(rest) == 0 || !complete {
				return off, nil // the last record, torn by a crash
			}
			return 0, errs.New(errs.DataLoss, "producer offsets %s are damaged at byte %d (records follow it): %v; restore the file, or move it away to forget every producer's offsets", s.path, off, err)
		}
		s.apply(e)
		s.mu.records++
		off += int64(len(line)) + 1
		data = rest
	}
	return off, nil
}

func decode(line []byte) (entry, error) {
	var e entry
	sum, body, ok := bytes.Cut(line, []byte{' '})
	if !ok || len(sum) != 8 {
		return e, errors.New("no checksum")
	}
	want, err := strconv.ParseUint(string(sum), 16, 32)
	if err != nil {
		return e, errors.New("no checksum")
	}
	if crc32.Checksum(body, castagnoli) != uint32(want) {
		return e, errors.New("checksum mismatch")
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return e, err
	}
	return e, nil
}

func encode(e entry) ([]byte, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "%08x %s\n", crc32.Checksum(body, castagnoli), body), nil
}

func (s *Store) apply(e entry) {
	k := key{e.Producer, e.Table}
	if e.Deleted {
		delete(s.mu.byKey, k)
	} else {
		s.mu.byKey[k] = e.Offsets
	}
}

// cut truncates the file at path to size, durably.
func cut(fsys vfs.FS, path string, size int64) error {
	f, err := fsys.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	err = fsio.Truncate(f, size)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// Register stores offsets under (producer, table) unless offsets of the same
// table id are there already; it reports whether it stored them. Of
// concurrent registrations exactly one stores.
func (s *Store) Register(producer, table string, offs Offsets) (created bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.mu.byKey[key{producer, table}]; ok && old.TableID == offs.TableID {
		return false, nil
	}
	if err := s.changeLocked(entry{Producer: producer, Table: table, Offsets: offs}); err != nil {
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
	if _, ok := s.mu.byKey[key{producer, table}]; !ok {
		return nil
	}
	return s.changeLocked(entry{Producer: producer, Table: table, Deleted: true})
}

// Close closes the log.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.f == nil {
		return nil
	}
	err := s.mu.f.Close()
	s.mu.f = nil
	return err
}

// changeLocked makes e durable, then applies it. The log is rewritten with
// the live entries only when it holds more than twice as many records
// besides (and 64 more), so that a change costs one append and one sync,
// amortized, however many producers are registered.
func (s *Store) changeLocked(e entry) error {
	rec, err := encode(e)
	if err != nil {
		return err
	}
	if s.mu.f == nil || s.mu.records > 3*len(s.mu.byKey)+64 {
		if err := s.rewriteLocked(); err != nil {
			return fmt.Errorf("save producer offsets: %w", err)
		}
	}
	if err := s.appendLocked(rec); err != nil {
		// What the append left is dropped by the rewrite of the next change.
		s.mu.f.Close()
		s.mu.f = nil
		return fmt.Errorf("save producer offsets: %w", err)
	}
	s.apply(e)
	s.mu.records++
	return nil
}

func (s *Store) appendLocked(rec []byte) error {
	if _, err := s.mu.f.WriteAt(rec, s.mu.size); err != nil {
		return err
	}
	if err := s.mu.f.Sync(); err != nil {
		return err
	}
	s.mu.size += int64(len(rec))
	return nil
}

// rewriteLocked replaces the log, atomically, by one record per live entry
// and opens it for appends.
func (s *Store) rewriteLocked() error {
	if s.mu.f != nil {
		s.mu.f.Close()
		s.mu.f = nil
	}
	var data []byte
	for k, offs := range s.mu.byKey {
		rec, err := encode(entry{Producer: k.producer, Table: k.table, Offsets: offs})
		if err != nil {
			return err
		}
		data = append(data, rec...)
	}
	if err := fsio.WriteFileAtomic(s.fs, s.path, data, 0o644); err != nil {
		return err
	}
	f, err := s.fs.OpenReadWrite(s.path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	s.mu.f, s.mu.size, s.mu.records = f, int64(len(data)), len(s.mu.byKey)
	return nil
}
