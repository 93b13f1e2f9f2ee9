// Package kv keeps the primary-key state of every table in one pebble
// database: the current row of each key, each bucket's applied log offset
// and row count, and the auto-increment reservations. It stores and reads; what a write does
// to a key is decided by package merge, and the log (package logstore) is the
// write-ahead log: a bucket's state is always the replay of its changelog up
// to its applied offset. After a failed write of pebble's own log the store
// is Broken until Reopen, which the engine follows with that replay.
package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/internal/pebbledb"
)

// Options configure the store. The zero value means the defaults.
type Options struct {
	// CacheBytes is pebble's block cache. Default 256 MiB (pebble's own
	// default of 8 MiB makes point reads four times slower).
	CacheBytes int64
	// Logger receives pebble's messages at debug level. Default: discarded.
	Logger *slog.Logger
	// FS is where the store's files are; nil is the real disk (tests inject
	// faults).
	FS vfs.FS
	// MaxOpenFiles bounds the files pebble keeps open. Default pebble's
	// (1000).
	MaxOpenFiles int
}

// Store is the pebble database of primary-key state.
type Store struct {
	dir   string
	opts  Options
	cache *pebble.Cache

	// mu is held shared by every use of db (for a Snapshot, until it is
	// closed) and exclusively by Reopen, which replaces db. A Txn does not
	// hold it: Reopen's caller has quiesced every writer.
	mu sync.RWMutex
	db *pebbledb.DB
}

// Key prefixes. Every key of a table starts with its prefix byte and the
// table id, so dropping a table is four range deletions.
const (
	prefixRow     = 'r' // r, table BE8, bucket BE4, encoded primary key → encoded row
	prefixApplied = 'a' // a, table BE8, bucket BE4 → next log offset not yet applied, BE8
	prefixAutoInc = 'i' // i, table BE8 → highest id reserved, BE8
	prefixCount   = 'n' // n, table BE8, bucket BE4 → rows of the bucket, BE8 (count.go)
)

// Open opens (creating if needed) the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = 256 << 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	s := &Store{dir: dir, opts: opts, cache: pebble.NewCache(opts.CacheBytes)}
	db, err := s.open()
	if err != nil {
		s.cache.Unref()
		return nil, fmt.Errorf("open kv store: %w", err)
	}
	s.db = db
	return s, nil
}

func (s *Store) open() (*pebbledb.DB, error) {
	return pebbledb.Open("primary-key state", s.dir, &pebble.Options{
		FormatMajorVersion: pebble.FormatNewest,
		Cache:              s.cache,
		// Aggregations and updates rewrite the same keys over and over: a
		// larger memtable lets rewrites collapse before they are flushed and
		// compacted, which was most of the write path's CPU.
		MemTableSize:                64 << 20,
		MemTableStopWritesThreshold: 4,
		FS:                          s.opts.FS,
		MaxOpenFiles:                s.opts.MaxOpenFiles,
	}, s.opts.Logger.With("component", "kv"))
}

// Close closes the store. The caller has quiesced writers and readers,
// which also excludes Reopen.
func (s *Store) Close() error {
	err := s.db.Close()
	s.cache.Unref()
	return err
}

// RowKey appends the pebble key of a row: the table and bucket prefix, then
// the encoded primary key.
func RowKey(dst []byte, table int64, bucket int, pk []byte) []byte {
	dst = slices.Grow(dst, bucketPrefixLen+len(pk))
	dst = bucketPrefix(dst, prefixRow, table, bucket)
	return append(dst, pk...)
}

func tablePrefix(dst []byte, prefix byte, table int64) []byte {
	dst = append(dst, prefix)
	return binary.BigEndian.AppendUint64(dst, uint64(table))
}

// bucketPrefixLen is the length of a bucket's key prefix.
const bucketPrefixLen = 1 + 8 + 4

func bucketPrefix(dst []byte, prefix byte, table int64, bucket int) []byte {
	dst = tablePrefix(dst, prefix, table)
	return binary.BigEndian.AppendUint32(dst, uint32(bucket))
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// Applied returns the next log offset of the bucket not yet applied to its
// state (0 for a new bucket).
func (s *Store) Applied(table int64, bucket int) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return readApplied(s.db, table, bucket)
}

// reader is what the database, a batch and a snapshot have in common.
type reader interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

func readApplied(r reader, table int64, bucket int) (int64, error) {
	v, closer, err := r.Get(bucketPrefix(nil, prefixApplied, table, bucket))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("applied offset of table %d bucket %d: %d bytes", table, bucket, len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// DropTable removes every key of a table.
func (s *Store) DropTable(table int64) error {
	return s.write(pebble.Sync, func(b *pebble.Batch) error {
		for _, p := range []byte{prefixRow, prefixApplied, prefixAutoInc, prefixCount} {
			start := tablePrefix(nil, p, table)
			if err := b.DeleteRange(start, prefixEnd(start), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// write commits the batch fill makes, in one hold of the read lock: the
// batch is of the database it is committed to.
func (s *Store) write(opts *pebble.WriteOptions, fill func(*pebble.Batch) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b := s.db.NewBatch()
	defer b.Close()
	if err := fill(b); err != nil {
		return err
	}
	return commitLocked(s.db, b, opts)
}

// commitLocked commits b to db, unless the disk is known to fail: a failed
// flush would stall the write until it succeeds, and a failed log write
// leaves pebble unable to commit at all. The caller holds the store's read
// lock.
func commitLocked(db *pebbledb.DB, b *pebble.Batch, opts *pebble.WriteOptions) (err error) {
	if err := db.WriteErr(); err != nil {
		return err
	}
	defer db.Guard(&err)
	return b.Commit(opts)
}
