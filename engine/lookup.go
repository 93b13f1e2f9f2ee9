package engine

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/pkwrite"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
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
	cols, err := checkLookup(info, path, req)
	if err != nil {
		return nil, err
	}
	if info.IsPartitioned() {
		return e.openPartitionedLookup(info, path, req, cols)
	}
	if req.CreatePartitions != nil {
		return nil, errs.New(errs.Invalid, "lookup of %s: create_partitions applies to partitioned tables only", path)
	}
	t, err := e.table(info)
	if err != nil {
		return nil, err
	}
	return &Lookuper{l: e.tableLookup(t, path, req, cols)}, nil
}

// checkLookup checks a lookup against its table's definition and returns
// the answer's table columns.
func checkLookup(info *catalog.TableInfo, path protocol.TablePath, req protocol.LookupRequest) ([]int, error) {
	if path.View != "" {
		return nil, errs.New(errs.Precondition, "lookup of %s: views cannot be looked up; look up %s", path.FullName(), path)
	}
	if !info.IsPrimaryKey() {
		return nil, errs.New(errs.Precondition, "lookup of %s: it is a log table; only primary-key tables can be looked up", path)
	}
	if req.Prefix && req.InsertIfNotExists {
		return nil, errs.New(errs.Invalid, "lookup of %s: insert_if_not_exists needs a point lookup, not a prefix lookup", path)
	}
	if req.Prefix && !info.HasPrefixIndex() {
		var key []string // the physical primary key: without partition keys
		for _, c := range info.PhysicalKeyIndexes() {
			key = append(key, info.Columns[c].Name)
		}
		return nil, errs.New(errs.Precondition, "prefix lookup of %s: its bucket key (%s) is not a strict prefix of its primary key (%s), so it has no prefix index",
			path, strings.Join(info.BucketKey(), ", "), strings.Join(key, ", "))
	}
	var cols []int
	for _, name := range req.Columns {
		c := info.ColumnIndex(name)
		if c < 0 {
			return nil, errs.New(errs.NotFound, "lookup of %s: column %q does not exist (columns: %s)", path, name, viewplan.ColumnNames(info.ArrowSchema()))
		}
		if slices.Contains(cols, c) {
			return nil, errs.New(errs.Invalid, "lookup of %s: column %q is asked for twice", path, name)
		}
		cols = append(cols, c)
	}
	if req.InsertIfNotExists {
		for c, col := range info.Columns {
			if !*col.Nullable && !slices.Contains(info.PrimaryKeyIndexes(), c) && col.Name != info.AutoIncrementColumn() {
				return nil, errs.New(errs.Precondition, "lookup of %s: insert_if_not_exists inserts keys with NULLs, but column %q is NOT NULL", path, col.Name)
			}
		}
	}
	return cols, nil
}

// tableLookup is the lookuper of one table (or partition) of a checked
// lookup.
func (e *Engine) tableLookup(t *table.Table, path protocol.TablePath, req protocol.LookupRequest, cols []int) *lookup.Lookuper {
	info := t.Current().Info
	lt := lookup.Table{
		Name: path.String(), ID: info.TableID, Schema: info.ArrowSchema(), Types: func() []arrow.DataType { return t.Current().Types },
		PK: info.PrimaryKeyIndexes(), BucketKey: info.BucketKeyIndexes(), Buckets: info.BucketCount(),
		Fixed: info.PartitionKeyIndexes(), // not in a partition's stored key (table.NewPK)
	}
	attr := tableAttr(path.String())
	opts := lookup.Options{Columns: cols, Prefix: req.Prefix, Observe: func(m lookup.Meta) {
		e.met.lookupKeys.Add(context.Background(), int64(m.Keys), attr)
	}}
	if req.InsertIfNotExists {
		opts.Insert = func(ctx context.Context, keys []lookup.Missing) error {
			return e.insertKeys(t, keys)
		}
	}
	return lookup.New(e.kv, lt, opts, e.opts.Allocator)
}

// Lookuper answers the key batches of one lookup: of a table, or routed to
// the partitions of a partitioned one.
type Lookuper struct {
	l     *lookup.Lookuper
	parts *partitionLookup
}

// Schema is the schema of the answers.
func (l *Lookuper) Schema() *arrow.Schema {
	if l.parts != nil {
		return l.parts.schema
	}
	return l.l.Schema()
}

// Lookup answers one batch of keys; the answer is the caller's to release.
func (l *Lookuper) Lookup(ctx context.Context, keys arrow.RecordBatch) (arrow.RecordBatch, protocol.LookupMeta, error) {
	if l.parts != nil {
		return l.parts.lookup(ctx, keys)
	}
	ans, meta, err := l.l.Lookup(ctx, keys)
	return ans, protocol.LookupMeta(meta), err
}

// InlineKeys turns the JSON keys of an inline lookup into a key batch of the
// table's key (or bucket-key) columns.
func (e *Engine) InlineKeys(req protocol.LookupRequest) (arrow.RecordBatch, error) {
	info, path, err := e.resolveInfo(req.Table)
	if err != nil {
		return nil, err
	}
	keyCols := info.PrimaryKeyIndexes()
	if req.Prefix {
		keyCols = append(slices.Clone(info.BucketKeyIndexes()), info.PartitionKeyIndexes()...)
	}
	schema := info.ArrowSchema()
	fields := make([]arrow.Field, len(keyCols))
	for i, c := range keyCols {
		fields[i] = schema.Field(c)
	}
	b := array.NewRecordBuilder(e.opts.Allocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for k, key := range req.Keys {
		for name := range key {
			if !slices.ContainsFunc(fields, func(f arrow.Field) bool { return f.Name == name }) {
				return nil, errs.New(errs.Invalid, "lookup of %s: key %d has column %q, which is not one of the key columns %s", path, k, name, viewplan.ColumnNames(arrow.NewSchema(fields, nil)))
			}
		}
		for i, f := range fields {
			raw, ok := key[f.Name]
			if !ok {
				return nil, errs.New(errs.Invalid, "lookup of %s: key %d lacks column %q", path, k, f.Name)
			}
			v, err := row.Coerce(f.Type, raw)
			if err != nil {
				return nil, errs.New(errs.Invalid, "lookup of %s: key %d, column %q: %w", path, k, f.Name, err)
			}
			if v == nil {
				return nil, errs.New(errs.Invalid, "lookup of %s: key %d, column %q is null", path, k, f.Name)
			}
			row.Append(b.Field(i), v)
		}
	}
	return b.NewRecordBatch(), nil
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
	if err := e.pkw.Writable(t); err != nil {
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
	byBucket := map[int][]pkwrite.Op{}
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
		o := pkwrite.Op{Row: append(k.Row, make(row.Row, len(sch.Types)-len(k.Row))...)}
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
	ops := make([][]pkwrite.Op, len(touched))
	for i, b := range touched {
		ops[i] = byBucket[b]
	}
	_, err = e.pkw.ApplyLocked(t, sch, w, touched, ops, logstore.Writer{})
	return err
}
