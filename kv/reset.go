package kv

import (
	"encoding/binary"

	"github.com/cockroachdb/pebble/v2"
)

// ResetBucket removes a bucket's rows, row count and applied offset, keeping the
// table's auto-increment reservations: the bucket's state is then that of
// an empty log, and the engine replays the bucket's changelog from its start
// on open. fluxgate repair uses it when it cuts a log below the state.
func (s *Store) ResetBucket(table int64, bucket int) error {
	return s.write(pebble.Sync, func(b *pebble.Batch) error {
		rows := bucketPrefix(nil, prefixRow, table, bucket)
		if err := b.DeleteRange(rows, prefixEnd(rows), nil); err != nil {
			return err
		}
		if err := b.Delete(bucketPrefix(nil, prefixCount, table, bucket), nil); err != nil {
			return err
		}
		return b.Delete(bucketPrefix(nil, prefixApplied, table, bucket), nil)
	})
}

// MaxTableID returns the largest table id that has state in the store, 0 if
// none: ids are not handed out again while state of theirs is here.
func (s *Store) MaxTableID() (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	it, err := s.db.NewIter(nil)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var m int64
	for _, p := range []byte{prefixRow, prefixApplied, prefixAutoInc, prefixCount} {
		if it.SeekLT([]byte{p + 1}) && len(it.Key()) >= 9 && it.Key()[0] == p {
			m = max(m, int64(binary.BigEndian.Uint64(it.Key()[1:9])))
		}
	}
	return m, it.Error()
}
