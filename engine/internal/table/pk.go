package table

import (
	"fmt"
	"math"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/inflight"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/row"
)

// PK is what a primary-key table has besides its log: a write lock per
// bucket, the types of its key, and its auto-increment ids. (The merger and
// the column types go with the schema: Schema.)
type PK struct {
	locks      []sync.Mutex   // one per bucket: a bucket's writes read and change its state in turn
	InFlight   inflight.Queue // writes appended and not yet committed
	keyIndexes []int          // of the stored key's columns
	KeyTypes   []arrow.DataType
	IDs        *kv.IDs // nil without an auto-increment column
	// Counted: the table keeps a row count per bucket (engine's stats.go),
	// which every write and replay changes with the keys it adds and
	// removes.
	Counted bool
}

// NewPK makes the primary-key state of info's table, whose auto-increment
// ids are kept in store.
func NewPK(info *catalog.TableInfo, store *kv.Store) (*PK, error) {
	schema := info.ArrowSchema()
	// A partition's rows all have its partition values, so its stored key
	// is the physical primary key (as in Fluss): then a bucket-key prefix
	// is a byte prefix of it (prefix lookups). Other tables: the primary key.
	st := &PK{locks: make([]sync.Mutex, info.BucketCount()), keyIndexes: info.PhysicalKeyIndexes(), Counted: KeepsRowCount(info)}
	for _, i := range st.keyIndexes {
		st.KeyTypes = append(st.KeyTypes, schema.Field(i).Type)
	}
	var err error
	if col := info.AutoIncrementColumn(); col != "" {
		ceiling := int64(math.MaxInt64)
		if schema.Field(info.ColumnIndex(col)).Type.ID() == arrow.INT32 {
			ceiling = math.MaxInt32
		}
		if st.IDs, err = store.IDs(info.TableID, info.AutoIncrementCacheSize(), ceiling); err != nil {
			return nil, fmt.Errorf("auto-increment ids of %s: %w", info.Path(), err)
		}
	}
	return st, nil
}

// KeepsRowCount reports whether a primary-key table keeps a row count: a
// WAL-image table does not, as in Fluss (the engine's stats.go says why).
func KeepsRowCount(info *catalog.TableInfo) bool {
	return info.ChangelogImage() != catalog.ChangelogWAL
}

// Lock takes the write locks of the buckets, in ascending order so that
// writes spanning several buckets cannot deadlock; Unlock releases them.
func (st *PK) Lock(buckets []int) {
	for _, b := range buckets {
		st.locks[b].Lock()
	}
}

func (st *PK) Unlock(buckets []int) {
	for _, b := range buckets {
		st.locks[b].Unlock()
	}
}

// Quiesce takes every bucket's lock and waits for the writes in flight to
// commit: then no primary-key write is under way until unlock is called.
func (st *PK) Quiesce() (unlock func()) {
	all := Indexes(len(st.locks))
	st.Lock(all)
	st.InFlight.Drain(all)
	return func() { st.Unlock(all) }
}

// Key encodes the primary key of a full-width row.
func (st *PK) Key(dst []byte, r row.Row) ([]byte, error) {
	vals := make([]any, len(st.keyIndexes))
	for i, c := range st.keyIndexes {
		vals[i] = r[c]
	}
	return row.EncodeKey(dst, st.KeyTypes, vals)
}

// NextID is the merge engines' source of auto-increment ids.
func (st *PK) NextID() (int64, error) { return st.IDs.Next() }
