package engine

import (
	"context"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/tablelookup"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/lookup"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
)

// OpenLookup validates a lookup against its table and returns the lookuper
// that answers its key batches.
func (e *Engine) OpenLookup(req protocol.LookupRequest) (*Lookuper, error) {
	info, path, err := e.resolveInfo(req.Table)
	if err != nil {
		return nil, err
	}
	cols, err := tablelookup.Check(info, path, req)
	if err != nil {
		return nil, err
	}
	if info.IsPartitioned() {
		return e.lookups.OpenPartitioned(info, path, req, cols), nil
	}
	if req.CreatePartitions != nil {
		return nil, errs.New(errs.Invalid, "lookup of %s: create_partitions applies to partitioned tables only", path)
	}
	t, err := e.table(info)
	if err != nil {
		return nil, err
	}
	return e.lookups.Open(t, path, req, cols), nil
}

// Lookuper answers the key batches of one lookup (tablelookup's: an alias,
// so that flight keeps calling its Schema and Lookup as the engine's).
type Lookuper = tablelookup.Lookuper

// newLookupEnv is what lookups use of the engine.
func (e *Engine) newLookupEnv() tablelookup.Env {
	return tablelookup.Env{
		Alloc: e.opts.Allocator,
		KV:    e.kv,
		KeysCounter: func(table string) func(int) {
			attr := tableAttr(table)
			return func(keys int) { e.met.lookupKeys.Add(context.Background(), int64(keys), attr) }
		},
		Insert:    e.insertKeys,
		Partition: e.partitionTable,
		Group: func(info *catalog.TableInfo, keys arrow.RecordBatch) ([]tablelookup.Group, error) {
			route := partitionRoute{info: info}
			groups, err := route.group(keys)
			if err != nil {
				return nil, err
			}
			out := make([]tablelookup.Group, len(groups))
			for i, g := range groups {
				out[i] = tablelookup.Group{Values: g.values, Rows: g.rows}
			}
			return out, nil
		},
		Take: take,
	}
}

// InlineKeys turns the JSON keys of an inline lookup into a key batch of the
// table's key (or bucket-key) columns.
func (e *Engine) InlineKeys(req protocol.LookupRequest) (arrow.RecordBatch, error) {
	info, path, err := e.resolveInfo(req.Table)
	if err != nil {
		return nil, err
	}
	return tablelookup.Keys(info, path, req, e.opts.Allocator)
}

// PlanInlineLookup checks an inline lookup and returns the schema of its
// answer and the ticket that runs it; it runs (and inserts, if asked) when
// the ticket is redeemed.
func (e *Engine) PlanInlineLookup(req protocol.LookupRequest) (*arrow.Schema, protocol.Ticket, error) {
	l, err := e.OpenLookup(req)
	if err != nil {
		return nil, protocol.Ticket{}, err
	}
	keys, err := e.InlineKeys(req)
	if err != nil {
		return nil, protocol.Ticket{}, err
	}
	keys.Release()
	info, path, _ := e.resolveInfo(req.Table)
	tk := protocol.Ticket{V: 1, TableID: info.TableID, Table: path.FullName(), View: protocol.ViewLookup, Lookup: &req}
	return l.Schema(), tk, nil
}

// InlineLookup redeems an inline lookup ticket: its answer as one batch.
func (e *Engine) InlineLookup(ctx context.Context, tk protocol.Ticket) (arrow.RecordBatch, protocol.LookupMeta, error) {
	if tk.Lookup == nil {
		return nil, protocol.LookupMeta{}, errs.New(errs.Invalid, `ticket: view lookup without "lookup"`)
	}
	if _, err := e.cat.TableByID(tk.TableID); err != nil {
		return nil, protocol.LookupMeta{}, err
	}
	if info, _, err := e.resolveInfo(tk.Lookup.Table); err != nil || info.TableID != tk.TableID {
		return nil, protocol.LookupMeta{}, errs.New(errs.NotFound, "ticket: table id %d is no longer %s", tk.TableID, tk.Lookup.Table)
	}
	l, err := e.OpenLookup(*tk.Lookup)
	if err != nil {
		return nil, protocol.LookupMeta{}, err
	}
	keys, err := e.InlineKeys(*tk.Lookup)
	if err != nil {
		return nil, protocol.LookupMeta{}, err
	}
	defer keys.Release()
	return l.Lookup(ctx, keys)
}

// insertKeys inserts the keys a lookup did not find. Under the buckets' locks
// it skips those another lookup inserted meanwhile and takes ids, in request
// order, only for the keys it inserts, so ids stay dense.
func (e *Engine) insertKeys(t *table.Table, keys []lookup.Missing) error {
	st := t.PK
	var buckets []int
	for _, k := range keys {
		if !slices.Contains(buckets, k.Bucket) {
			buckets = append(buckets, k.Bucket)
		}
	}
	slices.Sort(buckets)
	if err := e.writablePK(t); err != nil {
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
	check := e.kv.NewTxn()
	defer check.Abort()
	check.ReadThrough(st.InFlight.Through(buckets)) // keys being inserted count as there
	byBucket := map[int][]op{}
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
		o := op{row: append(k.Row, make(row.Row, len(sch.Types)-len(k.Row))...)}
		if st.IDs != nil {
			if o.id, err = st.IDs.Next(); err != nil {
				return err
			}
		}
		byBucket[k.Bucket] = append(byBucket[k.Bucket], o)
	}
	touched := slices.Sorted(maps.Keys(byBucket))
	if len(touched) == 0 {
		return nil
	}
	ops := make([][]op, len(touched))
	for i, b := range touched {
		ops[i] = byBucket[b]
	}
	_, err = e.applyPKLocked(t, sch, w, touched, ops, logstore.Writer{})
	return err
}
