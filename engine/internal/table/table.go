// Package table is an open table: its log, its current schema and what is
// made from it, and its primary-key state. It is the
// core that the engine's rooms (writing, reading, lookups, tiering) work
// over; it knows nothing of the engine that holds the open tables.
package table

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/bucketing"
	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/logstore"
)

// Table is an open table: its definition and its log.
type Table struct {
	schema     atomic.Pointer[Schema] // replaced by alter-table
	Log        *logstore.Table
	Assigner   *bucketing.Assigner // nil without a bucket key
	Codec      logstore.Codec
	RoundRobin atomic.Uint32 // round-robin start for streams without a bucket key
	Dropped    atomic.Bool
	PK         *PK       // primary-key tables only
	Opened     time.Time // when this server opened it: its lake's first round comes a freshness after
}

// Open opens the table of info, whose log is in dir; a primary-key table's
// state is in store, which the caller brings up to date with the log
// (Replay) before the table serves.
func Open(dir string, info *catalog.TableInfo, logOpts logstore.Options, alloc memory.Allocator, store *kv.Store) (*Table, error) {
	log, err := logstore.Open(dir, info.BucketCount(), logOpts)
	if err != nil {
		return nil, fmt.Errorf("open table %s: %w", info.Path(), err)
	}
	t, err := newTable(log, info, alloc, store)
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("open table %s: %w", info.Path(), err)
	}
	return t, nil
}

func newTable(log *logstore.Table, info *catalog.TableInfo, alloc memory.Allocator, store *kv.Store) (*Table, error) {
	sch, err := NewSchema(info, alloc)
	if err != nil {
		return nil, err
	}
	t := &Table{Log: log, Codec: codecOf(info.Compression()), Opened: time.Now()}
	t.schema.Store(sch)
	if key := info.BucketKeyIndexes(); len(key) > 0 {
		if t.Assigner, err = bucketing.NewAssigner(info.ArrowSchema(), key, info.BucketCount()); err != nil {
			return nil, err
		}
	}
	if info.IsPrimaryKey() {
		if t.PK, err = NewPK(info, store); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Current returns the table's current definition and schema.
func (t *Table) Current() *Schema { return t.schema.Load() }

// SetSchema makes s the table's current schema (alter-table).
func (t *Table) SetSchema(s *Schema) { t.schema.Store(s) }

// codecOf is the log codec of a table's compression option.
func codecOf(name string) logstore.Codec {
	switch name {
	case "lz4_frame":
		return logstore.CodecLZ4
	case "zstd":
		return logstore.CodecZstd
	}
	return logstore.CodecNone
}

// Indexes returns 0, 1, ..., n-1: all of a schema's columns (for a log
// reader: frames written before columns were added have fewer), or all of
// a table's buckets.
func Indexes(n int) []int {
	cols := make([]int, n)
	for i := range cols {
		cols[i] = i
	}
	return cols
}
