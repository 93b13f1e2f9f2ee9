// Package tables is the engine's open tables: each table, and each partition
// of a partitioned table, opened from its catalog definition (its log, and a
// primary-key table's state caught up with it) and kept by id; a name, an id
// or a partition resolved to its open table; a partition created when a
// writer may create it. The rooms that work on tables import it to find them;
// it knows nothing of them.
package tables

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sync/errgroup"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/datadir"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/logstore"
)

// Options are what opening a table takes, the same for every table.
type Options struct {
	Dir    string           // the data directory: a table's data is in datadir.TableDir
	Log    logstore.Options // of every table's log
	Alloc  memory.Allocator
	KV     *kv.Store // every primary-key table's state
	Logger *slog.Logger
	// Zone and Now are automatic partitioning's default time zone and
	// clock: a partition created out of date is refused (partition.go).
	Zone *time.Location
	Now  func() time.Time
}

// Set is the open tables of a data directory.
type Set struct {
	opts Options
	cat  *catalog.Catalog

	mu          sync.RWMutex
	tables      map[int64]*table.Table // by id; guarded by mu
	unavailable map[int64]error        // tables that could not open, and why; guarded by mu

	// partMu serializes partition DDL with dropping tables (partition.go).
	partMu sync.Mutex

	// PartitionListed, if set, is called by CreatePartition between listing
	// a new partition in the catalog and opening it (tests).
	PartitionListed func()
}

// New returns an empty set of the tables of cat.
func New(cat *catalog.Catalog, opts Options) *Set {
	return &Set{opts: opts, cat: cat, tables: map[int64]*table.Table{}, unavailable: map[int64]error{}}
}

// Catalog is the catalog the tables are defined in.
func (s *Set) Catalog() *catalog.Catalog { return s.cat }

// Open opens the table of info and adds it to the set: its log is
// recovered and a primary-key table's state caught up with it.
func (s *Set) Open(info *catalog.TableInfo) (*table.Table, error) {
	t, err := table.Open(datadir.TableDir(s.opts.Dir, info.TableID), info, s.opts.Log, s.opts.Alloc, s.opts.KV)
	if err != nil {
		return nil, err
	}
	if t.PK != nil {
		if err := t.Replay(s.opts.KV, s.opts.Logger); err != nil {
			t.Log.Close()
			return nil, fmt.Errorf("open table %s: %w", info.Path(), err)
		}
	}
	s.mu.Lock()
	s.tables[info.TableID] = t
	s.mu.Unlock()
	return t, nil
}

// OpenAll opens the tables that are not unavailable, openers at once
// (recovering a log waits mostly on fsyncs, which a disk serves better
// together), and returns each one's error.
func (s *Set) OpenAll(infos []*catalog.TableInfo) []error {
	failed := make([]error, len(infos))
	var g errgroup.Group
	g.SetLimit(openers)
	for i, info := range infos {
		if s.Unavailable(info.TableID) == nil {
			g.Go(func() error {
				_, failed[i] = s.Open(info)
				return nil
			})
		}
	}
	_ = g.Wait() // the errors are in failed
	return failed
}

// openers is how many tables OpenAll opens, and Close closes, at once.
const openers = 8

// Close closes every table: once its primary-key writes have committed,
// its log (which syncs it and records its writers).
func (s *Set) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := slices.Collect(maps.Values(s.tables))
	closed := make([]error, len(tables))
	var g errgroup.Group
	g.SetLimit(openers)
	for i, t := range tables {
		g.Go(func() error {
			if t.PK != nil {
				t.PK.Quiesce()()
			}
			closed[i] = t.Log.Close()
			return nil
		})
	}
	_ = g.Wait() // the errors are in closed
	clear(s.tables)
	return errors.Join(closed...)
}

// SetUnavailable makes the table id unavailable: its calls fail with err.
func (s *Set) SetUnavailable(id int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unavailable[id] = err
}

// Unavailable is why the table id is unavailable, nil when it is not.
func (s *Set) Unavailable(id int64) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.unavailable[id]
}

// Remove takes a dropped table out of the set and returns it, if it was
// open.
func (s *Set) Remove(id int64) (*table.Table, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[id]
	delete(s.tables, id)
	delete(s.unavailable, id)
	return t, ok
}

// All returns the open tables, partitions among them.
func (s *Set) All() []*table.Table {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Collect(maps.Values(s.tables))
}

// Range calls fn with each open table, holding the set's lock for reading:
// no table is removed (and its log closed) meanwhile. fn takes only leaf
// locks.
func (s *Set) Range(fn func(*table.Table)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, t := range s.tables {
		fn(t)
	}
}

// Table returns the open table of a definition: errs.NotFound when it is
// not open (dropped), the reason when it is unavailable (errs.DataLoss).
func (s *Set) Table(info *catalog.TableInfo) (*table.Table, error) {
	t, unavailable := s.get(info.TableID)
	if unavailable != nil {
		return nil, unavailable
	}
	if t == nil {
		return nil, errs.New(errs.NotFound, "table %s does not exist", info.Path())
	}
	return t, nil
}

// ByID returns the open table with id (a ticket's, a partition's).
func (s *Set) ByID(id int64) (*table.Table, error) {
	t, unavailable := s.get(id)
	if unavailable != nil {
		return nil, unavailable
	}
	if t == nil {
		return nil, errs.New(errs.NotFound, "table id %d does not exist (dropped or re-created)", id)
	}
	return t, nil
}

// get returns the open table with id, nil when there is none or it was
// dropped, and why it is unavailable.
func (s *Set) get(id int64) (*table.Table, error) {
	s.mu.RLock()
	t, ok := s.tables[id]
	unavailable := s.unavailable[id]
	s.mu.RUnlock()
	if !ok || t.Dropped.Load() {
		t = nil
	}
	return t, unavailable
}
