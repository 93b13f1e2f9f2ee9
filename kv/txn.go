package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/pebbledb"
)

// Txn is the state change of one write: it reads through its own pending
// writes, and commits them together with the buckets' new applied offsets.
// The caller holds the buckets' write locks from the first read to Commit, and
// commits only once the changelog it produced is durable: the state never
// runs ahead of the log.
type Txn struct {
	s  *Store
	db *pebbledb.DB // the store's database when the txn began
	b  *pebble.Batch
	// view is what the txn knows of keys: the values Prefetch read, and its
	// own writes over them, as indexes into vals (so that writing a key it
	// knows allocates nothing). A nil value is absent (or deleted).
	view  map[string]int
	vals  [][]byte
	arena []byte // Prefetch copies values here rather than one allocation each
	// through are earlier txns, not yet committed, newest first: for a key
	// they know, their view takes the place of the store's value.
	through []*Txn
	counts  map[countKey]int64 // row count changes per bucket (count.go)
}

// NewTxn starts a write.
func (s *Store) NewTxn() *Txn {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return &Txn{s: s, db: s.db, b: s.db.NewBatch()}
}

// ReadThrough makes the txn read keys as if the earlier txns, newest first,
// were committed. They must not change while this txn reads: a txn no longer
// changes once its caller has moved on to Commit.
func (t *Txn) ReadThrough(earlier []*Txn) { t.through = earlier }

// earlier returns the value of key in the newest earlier txn that knows it.
func (t *Txn) earlier(key []byte) (v []byte, ok bool) {
	for _, e := range t.through {
		if v, ok := e.lookup(key); ok {
			return v, true
		}
	}
	return nil, false
}

// prefetchSteps is how many Next calls Prefetch tries before it seeks: the
// keys of a batch are often close together in the store, and stepping to a
// near key is several times cheaper than a seek.
const prefetchSteps = 4

// Prefetch reads the stored values of keys with one ordered pass of an
// iterator, which is several times cheaper than a point lookup per key.
func (t *Txn) Prefetch(keys [][]byte) error {
	if len(keys) == 0 {
		return nil
	}
	if t.view == nil {
		t.view = make(map[string]int, len(keys))
		t.vals = make([][]byte, 0, len(keys))
	}
	if err := t.acquire(); err != nil {
		return err
	}
	defer t.s.mu.RUnlock()
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, bytes.Compare)
	it, err := t.db.NewIter(&pebble.IterOptions{LowerBound: sorted[0], UpperBound: append(slices.Clone(sorted[len(sorted)-1]), 0)})
	if err != nil {
		return err
	}
	// The iterator stays at the first stored key at or after the last key
	// looked up, so for the next (greater) key it steps forward, or seeks.
	valid := it.SeekGE(sorted[0])
	for _, k := range sorted {
		if _, done := t.view[string(k)]; done {
			continue
		}
		if v, ok := t.earlier(k); ok {
			t.add(k, v)
			continue
		}
		for steps := 0; valid && bytes.Compare(it.Key(), k) < 0; steps++ {
			if steps == prefetchSteps {
				valid = it.SeekGE(k)
				break
			}
			valid = it.Next()
		}
		var v []byte
		if valid && bytes.Equal(it.Key(), k) {
			raw, err := it.ValueAndErr()
			if err != nil {
				it.Close()
				return err
			}
			v = t.keep(raw)
		}
		t.add(k, v)
	}
	return it.Close()
}

// keep copies v into the txn's arena; the copy's capacity ends with it.
func (t *Txn) keep(v []byte) []byte {
	if len(t.arena)+len(v) > cap(t.arena) {
		t.arena = make([]byte, 0, max(64<<10, len(v)))
	}
	n := len(t.arena)
	t.arena = append(t.arena, v...)
	return t.arena[n:len(t.arena):len(t.arena)]
}

// Get returns the value of key as this txn sees it. The caller must not
// modify it.
func (t *Txn) Get(key []byte) ([]byte, bool, error) {
	if v, ok := t.lookup(key); ok {
		return v, v != nil, nil
	}
	if v, ok := t.earlier(key); ok {
		return v, v != nil, nil
	}
	if err := t.acquire(); err != nil {
		return nil, false, err
	}
	defer t.s.mu.RUnlock()
	v, closer, err := t.db.Get(key)
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
	t.note(key, value)
	return t.b.Set(key, value, nil)
}

// Delete removes key.
func (t *Txn) Delete(key []byte) error {
	t.note(key, nil)
	return t.b.Delete(key, nil)
}

// note records value as key's in the view.
func (t *Txn) note(key, value []byte) {
	if i, ok := t.view[string(key)]; ok {
		t.vals[i] = value
		return
	}
	if t.view == nil {
		t.view = map[string]int{}
	}
	t.add(key, value)
}

// add puts a key the view does not know into it.
func (t *Txn) add(key, value []byte) {
	t.view[string(key)] = len(t.vals)
	t.vals = append(t.vals, value)
}

// lookup returns key's value in the view.
func (t *Txn) lookup(key []byte) ([]byte, bool) {
	if i, ok := t.view[string(key)]; ok {
		return t.vals[i], true
	}
	return nil, false
}

// SetApplied records the bucket's next unapplied log offset.
func (t *Txn) SetApplied(table int64, bucket int, offset int64) error {
	return t.b.Set(bucketPrefix(nil, prefixApplied, table, bucket), binary.BigEndian.AppendUint64(nil, uint64(offset)), nil)
}

// Commit applies the txn, with its row count changes. It does not sync: the log it was derived from is
// durable already, and recovery replays the log from the applied offsets.
func (t *Txn) Commit() error {
	defer t.b.Close()
	if err := t.acquire(); err != nil {
		return err
	}
	defer t.s.mu.RUnlock()
	if err := t.setCounts(); err != nil {
		return err
	}
	return commitLocked(t.db, t.b, pebble.NoSync)
}

// acquire takes the store's read lock for a use of the txn's database, or
// fails if the store was reopened since the txn began (by a Reopen whose
// caller did not quiesce this writer): the txn's reads are of the old state.
// The caller releases the lock.
func (t *Txn) acquire() error {
	t.s.mu.RLock()
	if t.s.db != t.db {
		t.s.mu.RUnlock()
		return errs.New(errs.Unavailable, "the primary-key state was reopened while this write was under way; write again")
	}
	return nil
}

// Abort drops the txn.
func (t *Txn) Abort() { t.b.Close() }

// Snapshot is a consistent read view of the store.
type Snapshot struct {
	s    *Store
	snap *pebble.Snapshot
}

// Snapshot returns a consistent view; Close it when done: the view holds off
// Reopen.
func (s *Store) Snapshot() *Snapshot {
	s.mu.RLock()
	return &Snapshot{s: s, snap: s.db.NewSnapshot()}
}

// Close releases the view.
func (sn *Snapshot) Close() error {
	defer sn.s.mu.RUnlock()
	return sn.snap.Close()
}

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
