package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/fluxgate-io/fluxgate/errs"
)

// IDs hands out a table's auto-increment ids: 1, 2, 3, ... across all its
// buckets while the server runs (dense ids keep bitmaps small). It reserves
// them in blocks, durably, before handing them out, so a restart never
// reissues an id and skips at most one block.
type IDs struct {
	s       *Store
	table   int64
	block   int64
	ceiling int64 // largest id the column type holds

	mu    sync.Mutex
	next  int64 // guarded by mu
	limit int64 // highest reserved id; guarded by mu
}

// IDs returns the id allocator of a table, reserving block ids at a time,
// for a column that holds ids up to ceiling.
func (s *Store) IDs(table, block, ceiling int64) (*IDs, error) {
	reserved, err := s.reserved(table)
	if err != nil {
		return nil, err
	}
	return &IDs{s: s, table: table, block: max(block, 1), ceiling: ceiling, next: reserved + 1, limit: reserved}, nil
}

// Next returns a new id.
func (a *IDs) Next() (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next > a.ceiling {
		return 0, errs.New(errs.ResourceExhausted, "table %d: the auto-increment column has no ids left (largest %d)", a.table, a.ceiling)
	}
	if a.next > a.limit {
		limit := min(a.limit+a.block, a.ceiling)
		if err := a.s.reserve(a.table, limit); err != nil {
			return 0, fmt.Errorf("reserve auto-increment ids: %w", err)
		}
		a.limit = limit
	}
	id := a.next
	a.next++
	return id, nil
}

func (s *Store) reserved(table int64) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, closer, err := s.db.Get(tablePrefix(nil, prefixAutoInc, table))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	return int64(binary.BigEndian.Uint64(v)), nil
}

func (s *Store) reserve(table, limit int64) error {
	return s.write(pebble.Sync, func(b *pebble.Batch) error {
		return b.Set(tablePrefix(nil, prefixAutoInc, table), binary.BigEndian.AppendUint64(nil, uint64(limit)), nil)
	})
}
