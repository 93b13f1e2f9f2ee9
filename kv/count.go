package kv

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// A bucket's row count is kept under its own key and changed in the batch
// that changes its rows and applied offset, so that it never drifts from
// them, not even across a crash. The engine counts, per write, the keys that
// appeared and went (CountRows); Commit adds that to the stored count. Txns
// that count rows of one bucket commit one after another (a table's
// committer, or a replay with writes quiesced), so the stored count Commit
// reads is that of every earlier one.

// countKey identifies a bucket in a txn's pending count changes.
type countKey struct {
	table  int64
	bucket int
}

// CountRows adds delta (keys that appeared minus keys that went) to the
// bucket's row count when the txn commits.
func (t *Txn) CountRows(table int64, bucket int, delta int64) {
	if delta == 0 {
		return
	}
	if t.counts == nil {
		t.counts = map[countKey]int64{}
	}
	t.counts[countKey{table, bucket}] += delta
}

// setCounts adds the txn's count changes to the stored counts, in its batch.
// The caller holds the store's read lock.
func (t *Txn) setCounts() error {
	for k, delta := range t.counts {
		n, _, err := readCount(t.db, k.table, k.bucket)
		if err != nil {
			return err
		}
		if err := t.b.Set(bucketPrefix(nil, prefixCount, k.table, k.bucket), binary.BigEndian.AppendUint64(nil, uint64(n+delta)), nil); err != nil {
			return err
		}
	}
	return nil
}

// RowCount returns the bucket's row count, and false if the store keeps
// none for it (a bucket of a table that does not count its rows, or of one
// created before counts were kept and not yet counted: CountBuckets).
func (s *Store) RowCount(table int64, bucket int) (int64, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return readCount(s.db, table, bucket)
}

func readCount(r reader, table int64, bucket int) (int64, bool, error) {
	v, closer, err := r.Get(bucketPrefix(nil, prefixCount, table, bucket))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, false, fmt.Errorf("row count of table %d bucket %d: %d bytes", table, bucket, len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), true, nil
}

// CountBuckets stores the row count of each of the table's buckets that
// has none, counted from its rows: a table from before counts were kept
// starts keeping them. No write of the table may run meanwhile. It returns
// the rows it counted, per bucket. The counts need no sync: pebble's log is
// written in order, so a write that builds on them is lost in a crash with
// them.
func (s *Store) CountBuckets(table int64, buckets int) (map[int]int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b := s.db.NewBatch()
	defer b.Close()
	counted := map[int]int64{}
	for bucket := range buckets {
		if _, ok, err := readCount(s.db, table, bucket); ok || err != nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		n, err := s.countRows(table, bucket)
		if err != nil {
			return nil, err
		}
		if err := b.Set(bucketPrefix(nil, prefixCount, table, bucket), binary.BigEndian.AppendUint64(nil, uint64(n)), nil); err != nil {
			return nil, err
		}
		counted[bucket] = n
	}
	if len(counted) == 0 {
		return nil, nil
	}
	return counted, commitLocked(s.db, b, pebble.NoSync)
}

// countRows counts the stored rows of a bucket. The caller holds the read
// lock.
func (s *Store) countRows(table int64, bucket int) (int64, error) {
	lo := bucketPrefix(nil, prefixRow, table, bucket)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return 0, err
	}
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Close()
}
