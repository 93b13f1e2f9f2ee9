package engine

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

// pkState is what a primary-key table has besides its log: a write lock per
// bucket, the types of its key, and its auto-increment ids. (The merger and
// the column types go with the schema: tableSchema.)
type pkState struct {
	locks   []sync.Mutex   // one per bucket: a bucket's writes read and change its state in turn
	flight  inflight.Queue // writes appended and not yet committed
	pkIdx   []int
	pkTypes []arrow.DataType
	ids     *kv.IDs // nil without an auto-increment column
	// counted: the table keeps a row count per bucket (stats.go), which
	// every write and replay changes with the keys it adds and removes.
	counted bool
}

func newPKState(info *catalog.TableInfo, store *kv.Store) (*pkState, error) {
	schema := info.ArrowSchema()
	// A partition's rows all have its partition values, so its stored key
	// is the physical primary key (as in Fluss): then a bucket-key prefix
	// is a byte prefix of it (prefix lookups). Other tables: the primary key.
	st := &pkState{locks: make([]sync.Mutex, info.BucketCount()), pkIdx: info.PhysicalKeyIndexes(), counted: keepsRowCount(info)}
	for _, i := range st.pkIdx {
		st.pkTypes = append(st.pkTypes, schema.Field(i).Type)
	}
	var err error
	if col := info.AutoIncrementColumn(); col != "" {
		ceiling := int64(math.MaxInt64)
		if schema.Field(info.ColumnIndex(col)).Type.ID() == arrow.INT32 {
			ceiling = math.MaxInt32
		}
		if st.ids, err = store.IDs(info.TableID, info.AutoIncrementCacheSize(), ceiling); err != nil {
			return nil, fmt.Errorf("auto-increment ids of %s: %w", info.Path(), err)
		}
	}
	return st, nil
}

// lock takes the write locks of the buckets, in ascending order so that
// writes spanning several buckets cannot deadlock; unlock releases them.
func (st *pkState) lock(buckets []int) {
	for _, b := range buckets {
		st.locks[b].Lock()
	}
}

func (st *pkState) unlock(buckets []int) {
	for _, b := range buckets {
		st.locks[b].Unlock()
	}
}

// quiesce takes every bucket's lock and waits for the writes in flight to
// commit: then no primary-key write is under way until unlock is called.
func (st *pkState) quiesce() (unlock func()) {
	all := indexes(len(st.locks))
	st.lock(all)
	st.flight.Drain(all)
	return func() { st.unlock(all) }
}

// key encodes the primary key of a full-width row.
func (st *pkState) key(dst []byte, r row.Row) ([]byte, error) {
	vals := make([]any, len(st.pkIdx))
	for i, c := range st.pkIdx {
		vals[i] = r[c]
	}
	return row.EncodeKey(dst, st.pkTypes, vals)
}

// nextID is the merge engines' source of auto-increment ids.
func (st *pkState) nextID() (int64, error) { return st.ids.Next() }
