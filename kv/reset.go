package kv

import "github.com/cockroachdb/pebble/v2"

// ResetBucket removes a bucket's rows and applied offset, keeping the
// table's auto-increment reservations: the bucket's state is then that of
// an empty log, and the engine replays the bucket's changelog from its start
// on open. fluxgate repair uses it when it cuts a log below the state.
func (s *Store) ResetBucket(table int64, bucket int) error {
	b := s.db.NewBatch()
	defer b.Close()
	rows := bucketPrefix(nil, prefixRow, table, bucket)
	if err := b.DeleteRange(rows, prefixEnd(rows), nil); err != nil {
		return err
	}
	if err := b.Delete(bucketPrefix(nil, prefixApplied, table, bucket), nil); err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
}
