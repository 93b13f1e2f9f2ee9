package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Txn is the state change of one write: it reads through its own pending
// writes, and commits them together with the buckets' new applied offsets.
// The caller holds the buckets' write locks from the first read to Commit, and
// commits only once the changelog it produced is durable: the state never
// runs ahead of the log.
type Txn struct {
	s       *Store
	b       *pebble.Batch
	pending map[string][]byte // this txn's writes; nil value = deleted
	loaded  map[string][]byte // prefetched stored values; nil value = absent
}

// NewTxn starts a write.
func (s *Store) NewTxn() *Txn {
	return &Txn{s: s, b: s.db.NewBatch(), pending: map[string][]byte{}, loaded: map[string][]byte{}}
}

// Prefetch reads the stored values of keys with one ordered pass of an
// iterator, which is several times cheaper than a point lookup per key.
func (t *Txn) Prefetch(keys [][]byte) error {
	if len(keys) == 0 {
		return nil
	}
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, bytes.Compare)
	it, err := t.s.db.NewIter(&pebble.IterOptions{LowerBound: sorted[0], UpperBound: append(slices.Clone(sorted[len(sorted)-1]), 0)})
	if err != nil {
		return err
	}
	for _, k := range sorted {
		if _, done := t.loaded[string(k)]; done {
			continue
		}
		var v []byte
		if it.SeekGE(k) && bytes.Equal(it.Key(), k) {
			if v, err = it.ValueAndErr(); err != nil {
				it.Close()
				return err
			}
			v = slices.Clone(v)
		}
		t.loaded[string(k)] = v
	}
	return it.Close()
}

// Get returns the value of key as this txn sees it. The caller must not
// modify it.
func (t *Txn) Get(key []byte) ([]byte, bool, error) {
	if v, ok := t.pending[string(key)]; ok {
		return v, v != nil, nil
	}
	if v, ok := t.loaded[string(key)]; ok {
		return v, v != nil, nil
	}
	v, closer, err := t.s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := slices.Clone(v)
	return out, true, closer.Close()
}

// Set stores value under key; the txn keeps value.
func (t *Txn) Set(key, value []byte) error {
	t.pending[string(key)] = value
	return t.b.Set(key, value, nil)
}

// Delete removes key.
func (t *Txn) Delete(key []byte) error {
	t.pending[string(key)] = nil
	return t.b.Delete(key, nil)
}

// SetApplied records the bucket's next unapplied log offset.
func (t *Txn) SetApplied(table int64, bucket int, offset int64) error {
	return t.b.Set(bucketPrefix(nil, prefixApplied, table, bucket), binary.BigEndian.AppendUint64(nil, uint64(offset)), nil)
}

// Commit applies the txn. It does not sync: the log it was derived from is
// durable already, and recovery replays the log from the applied offsets.
func (t *Txn) Commit() error {
	err := t.b.Commit(pebble.NoSync)
	t.b.Close()
	return err
}

// Abort drops the txn.
func (t *Txn) Abort() { t.b.Close() }

// Snapshot is a consistent read view of the store.
type Snapshot struct {
	snap *pebble.Snapshot
}

// Snapshot returns a consistent view; Close it when done.
func (s *Store) Snapshot() *Snapshot { return &Snapshot{snap: s.db.NewSnapshot()} }

// Close releases the view.
func (sn *Snapshot) Close() error { return sn.snap.Close() }

// Applied returns the bucket's applied offset in this view: the view holds
// the bucket's changelog up to it.
func (sn *Snapshot) Applied(table int64, bucket int) (int64, error) {
	return readApplied(sn.snap, table, bucket)
}

// Rows calls fn with the encoded primary key and row of every key of the
// bucket, in key order. The slices are valid only during the call.
func (sn *Snapshot) Rows(table int64, bucket int, fn func(pk, value []byte) error) error {
	return sn.Prefix(table, bucket, nil, fn)
}

// Prefix calls fn for every key of the bucket whose encoded primary key starts
// with pk, in key order.
func (sn *Snapshot) Prefix(table int64, bucket int, pk []byte, fn func(pk, value []byte) error) error {
	lo := RowKey(nil, table, bucket, pk)
	it, err := sn.snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return err
	}
	skip := len(bucketPrefix(nil, prefixRow, table, bucket))
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return err
		}
		if err := fn(it.Key()[skip:], v); err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// Get calls fn with the stored value of each of pks (encoded primary keys of
// the bucket, ascending) that is present, reading them with one ordered
// iterator pass. The value is valid only during the call.
func (sn *Snapshot) Get(table int64, bucket int, pks [][]byte, fn func(i int, value []byte) error) error {
	if len(pks) == 0 {
		return nil
	}
	lo := RowKey(nil, table, bucket, nil)
	it, err := sn.snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return err
	}
	key := lo
	for i, pk := range pks {
		key = append(key[:len(lo)], pk...)
		if !it.SeekGE(key) || !bytes.Equal(it.Key(), key) {
			continue
		}
		v, err := it.ValueAndErr()
		if err == nil {
			err = fn(i, v)
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}
