package pkwrite

import (
	"maps"
	"slices"

	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/lookup"
	"github.com/fluxgate-io/fluxgate/row"
)

// Insert inserts the keys a lookup did not find (insert_if_not_exists).
// Under the buckets' locks it skips those another lookup inserted meanwhile
// and takes ids, in request order, only for the keys it inserts, so ids stay
// dense.
func (env *Env) Insert(t *table.Table, keys []lookup.Missing) error {
	st := t.PK
	var buckets []int
	for _, k := range keys {
		if !slices.Contains(buckets, k.Bucket) {
			buckets = append(buckets, k.Bucket)
		}
	}
	slices.Sort(buckets)
	if err := env.writable(t); err != nil {
		return err
	}
	st.Lock(buckets)
	defer st.Unlock(buckets)
	// Under the locks the schema cannot change: the rows take its width.
	sch := t.Current()
	info := sch.Info
	w, err := sch.Merger.NewWrite(info.PrimaryKeyIndexes(), false)
	if err != nil {
		return err
	}
	check := env.KV.NewTxn()
	defer check.Abort()
	check.ReadThrough(st.InFlight.Through(buckets)) // keys being inserted count as there
	byBucket := map[int][]Op{}
	var pk []byte
	for _, k := range keys {
		var err error
		if pk, err = st.Key(pk[:0], k.Row); err != nil {
			return err
		}
		if _, exists, err := check.Get(kv.RowKey(nil, info.TableID, k.Bucket, pk)); err != nil || exists {
			if err != nil {
				return err
			}
			continue
		}
		o := Op{Row: append(k.Row, make(row.Row, len(sch.Types)-len(k.Row))...)}
		if st.IDs != nil {
			if o.ID, err = st.IDs.Next(); err != nil {
				return err
			}
		}
		byBucket[k.Bucket] = append(byBucket[k.Bucket], o)
	}
	touched := slices.Sorted(maps.Keys(byBucket))
	if len(touched) == 0 {
		return nil
	}
	ops := make([][]Op, len(touched))
	for i, b := range touched {
		ops[i] = byBucket[b]
	}
	_, err = env.ApplyLocked(t, sch, w, touched, ops, logstore.Writer{})
	return err
}
