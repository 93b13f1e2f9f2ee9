package engine

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/bucketing"
	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/inflight"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/framestats"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/merge"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
)

// pkWrite is a write stream's plan for a primary-key table: which table
// column each batch column fills, and the merge engine's write.
type pkWrite struct {
	mode  string
	write *merge.Write

	// bound to the schema of the batches seen so far
	schema    *arrow.Schema
	cols      []int // table column of each batch column; -1 for _change_type
	changeCol int   // batch column of _change_type, or -1
	assigner  *bucketing.Assigner
}

// openPKWrite validates a write request for a primary-key table.
func openPKWrite(sch *table.Schema, req protocol.WriteRequest) (*pkWrite, error) {
	info := sch.Info
	path := info.Path()
	if req.Mode == protocol.ModeAppend {
		return nil, errs.New(errs.Precondition, "table %s has a primary key: write with mode upsert, delete or changelog, not append", path)
	}
	if req.Mode == "" {
		req.Mode = protocol.ModeUpsert
	}
	var target []int
	for _, name := range req.Columns {
		c := info.ColumnIndex(name)
		if c < 0 {
			return nil, errs.New(errs.Invalid, "write to %s: target column %q does not exist (columns: %s)", path, name, viewplan.ColumnNames(info.ArrowSchema()))
		}
		if slices.Contains(target, c) {
			return nil, errs.New(errs.Invalid, "write to %s: target column %q is listed twice", path, name)
		}
		target = append(target, c)
	}
	slices.Sort(target)
	w, err := sch.Merger.NewWrite(target, req.MergeMode == "overwrite")
	if err != nil {
		return nil, err
	}
	return &pkWrite{mode: req.Mode, write: w, changeCol: -1}, nil
}

// bind maps the columns of a batch schema to the table's, checking names and
// types against what the write mode needs.
func (p *pkWrite) bind(info *catalog.TableInfo, in *arrow.Schema) error {
	if p.schema != nil && p.schema.Equal(in) {
		return nil
	}
	path := info.Path()
	table := info.ArrowSchema()
	cols := make([]int, in.NumFields())
	changeCol := -1
	written := map[int]bool{}
	for j, f := range in.Fields() {
		if p.mode == protocol.ModeChangelog && f.Name == ColChangeType {
			if f.Type.ID() != arrow.STRING {
				return errs.New(errs.Invalid, "write to %s: column %s must be STRING, the batch has %s", path, ColChangeType, f.Type)
			}
			cols[j], changeCol = -1, j
			continue
		}
		c := info.ColumnIndex(f.Name)
		if c < 0 {
			return errs.New(errs.Invalid, "write to %s: the batch has column %q, which the table does not have (columns: %s)", path, f.Name, viewplan.ColumnNames(table))
		}
		if written[c] {
			return errs.New(errs.Invalid, "write to %s: column %q appears twice in the batch", path, f.Name)
		}
		if !arrow.TypeEqual(f.Type, table.Field(c).Type) {
			return errs.New(errs.Invalid, "write to %s: column %q is %s in the batch, the table wants %s (%s)", path, f.Name, f.Type, table.Field(c).Type, info.Columns[c].Type)
		}
		written[c] = true
		cols[j] = c
	}
	if p.mode == protocol.ModeChangelog && changeCol < 0 {
		return errs.New(errs.Invalid, "write to %s: a changelog batch needs a %s column", path, ColChangeType)
	}
	for _, c := range info.PrimaryKeyIndexes() {
		if !written[c] {
			return errs.New(errs.Invalid, "write to %s: the batch lacks primary-key column %q", path, table.Field(c).Name)
		}
	}
	if p.mode != protocol.ModeDelete {
		for _, c := range p.write.Target() {
			if !written[c] {
				return errs.New(errs.Invalid, "write to %s: the batch lacks column %q", path, table.Field(c).Name)
			}
		}
		for c := range written {
			if info.Columns[c].Name == info.AutoIncrementColumn() {
				return errs.New(errs.Precondition, "write to %s: column %q is the auto-increment column; its values are assigned by the table and may not be written", path, table.Field(c).Name)
			}
			if !slices.Contains(p.write.Target(), c) {
				return errs.New(errs.Invalid, "write to %s: the batch has column %q, which is not among the columns written", path, table.Field(c).Name)
			}
		}
	}
	var keyCols []int
	for _, c := range info.BucketKeyIndexes() {
		keyCols = append(keyCols, slices.Index(cols, c))
	}
	assigner, err := bucketing.NewAssigner(in, keyCols, info.BucketCount())
	if err != nil {
		return err
	}
	p.schema, p.cols, p.changeCol, p.assigner = in, cols, changeCol, assigner
	return nil
}

// submitPK applies one batch to a primary-key table: under the write locks of
// the buckets it touches it merges each row with the stored one, appends the
// changelog it produced to the log as one atomic unit, waits for it to be
// durable, and only then commits the new state.
func (w *WriteStream) submitPK(ctx context.Context, rec arrow.RecordBatch, seq int64) (*PendingWrite, error) {
	info, p := w.info, w.pk
	if err := p.bind(info, rec.Schema()); err != nil {
		return nil, err
	}
	if err := checkNulls(info, rec, p.cols); err != nil {
		return nil, err
	}
	res := WriteResult{Sequence: seq, Rows: rec.NumRows(), Buckets: map[int]int64{}}
	if rec.NumRows() == 0 {
		return &PendingWrite{res: res}, nil
	}
	byBucket := make([][]int, info.BucketCount())
	for i, b := range p.assigner.Assign(rec, nil) {
		byBucket[b] = append(byBucket[b], i)
	}
	var touched []int
	for b, rows := range byBucket {
		if len(rows) > 0 {
			touched = append(touched, b)
		}
	}
	ops := make([][]op, len(touched))
	width := len(info.Columns)
	slab := make([]any, int(rec.NumRows())*width) // the rows' values, one allocation
	for k, b := range touched {
		ops[k] = make([]op, 0, len(byBucket[b]))
		for _, i := range byBucket[b] {
			o, err := p.rowOp(rec, i, slab[i*width:(i+1)*width:(i+1)*width])
			if err != nil {
				return nil, errs.New(errs.Invalid, "write to %s: %w", info.Path(), err)
			}
			ops[k] = append(ops[k], o)
		}
	}
	writer := logstore.Writer{}
	if w.req.WriterID != "" {
		writer = logstore.Writer{ID: w.req.WriterID, Seq: seq, Sparse: w.info.Partition() != nil}
	}
	staged, err := w.e.stagePK(w.t, w.sch, p.write, touched, ops, writer)
	if err != nil {
		return nil, err
	}
	w.e.met.rowsWritten.Add(ctx, rec.NumRows(), tableAttr(info.Path().String()))
	return &PendingWrite{res: res, pk: staged}, nil
}

// op is one row of a write: an upsert of a full-width row (columns not
// written are nil) or a delete of the key it carries.
type op struct {
	del bool
	row row.Row
	id  int64 // the auto-increment id to give the key if it is new; 0 takes the next one
}

// rowOp returns row i of rec as an op whose row is r (all nil, as wide as
// the table). Its strings and binary values alias rec: the merge copies what
// it keeps (into encoded rows and the changelog) before the write returns.
func (p *pkWrite) rowOp(rec arrow.RecordBatch, i int, r row.Row) (op, error) {
	o := op{del: p.mode == protocol.ModeDelete, row: r}
	for j, c := range p.cols {
		if c >= 0 {
			o.row[c] = row.View(rec.Column(j), i)
		}
	}
	if p.changeCol >= 0 {
		ct := rec.Column(p.changeCol).(*array.String)
		if ct.IsNull(i) {
			return o, errs.New(errs.Invalid, "row %d: %s is null", i, ColChangeType)
		}
		switch v := ct.Value(i); v {
		case "insert", "update_after":
		case "delete":
			o.del = true
		case "update_before":
			o.row = nil // skipped: its update_after carries the new row
		default:
			return o, errs.New(errs.Invalid, "row %d: %s %q: want insert, update_before, update_after or delete", i, ColChangeType, v)
		}
	}
	return o, nil
}

// checkNulls rejects nulls in NOT NULL columns (primary keys among them).
func checkNulls(info *catalog.TableInfo, rec arrow.RecordBatch, cols []int) error {
	for j, c := range cols {
		if c < 0 || info.ArrowSchema().Field(c).Nullable {
			continue
		}
		if n := rec.Column(j).NullN(); n > 0 {
			what := "NOT NULL"
			if slices.Contains(info.PrimaryKeyIndexes(), c) {
				what = "a primary-key column"
			}
			return errs.New(errs.Invalid, "write to %s: column %q is %s but the batch has %d nulls in it", info.Path(), info.Columns[c].Name, what, n)
		}
	}
	return nil
}

// stagePK runs ops (per touched bucket, ascending) through the merge engine
// under the buckets' locks and appends the changelog; the state is committed
// once the changelog is durable (inflight.Txn.Wait).
func (e *Engine) stagePK(t *table.Table, sch *table.Schema, wr *merge.Write, buckets []int, ops [][]op, writer logstore.Writer) (*inflight.Txn, error) {
	if err := e.writablePK(t); err != nil {
		return nil, err
	}
	t.PK.Lock(buckets)
	defer t.PK.Unlock(buckets)
	return e.stagePKLocked(t, sch, wr, buckets, ops, writer)
}

// applyPKLocked is applyPK for a caller that holds the buckets' locks: it
// returns once the write is committed.
func (e *Engine) applyPKLocked(t *table.Table, sch *table.Schema, wr *merge.Write, buckets []int, ops [][]op, writer logstore.Writer) (map[int]int64, error) {
	p, err := e.stagePKLocked(t, sch, wr, buckets, ops, writer)
	if err != nil {
		return nil, err
	}
	return p.Wait()
}

// stagePKLocked merges the ops and appends their changelog, and queues the
// state change to be committed once the changelog is durable (inflight).
// The caller holds the buckets' locks. wr and ops are of sch; a write whose
// schema is no longer the table's (columns were added since it was opened)
// is FAILED_PRECONDITION, since its rows would be stored narrower than the
// table.
func (e *Engine) stagePKLocked(t *table.Table, sch *table.Schema, wr *merge.Write, buckets []int, ops [][]op, writer logstore.Writer) (*inflight.Txn, error) {
	if now := t.Current().Info; now.SchemaID != sch.Info.SchemaID {
		return nil, errs.New(errs.Precondition, "write to %s: the table's columns changed (schema %d, now %d) while the write was open; open it again", now.Path(), sch.Info.SchemaID, now.SchemaID)
	}
	st := t.PK
	if err := st.InFlight.Failed(); err != nil {
		return nil, err
	}
	if writer.ID != "" {
		// A retried batch must not be merged again: it would take new
		// auto-increment ids for nothing.
		if prev, dup, err := t.Log.Previous(writer); err != nil || dup {
			if err != nil {
				return nil, err
			}
			return inflight.Finished(prev.Ends, nil), nil
		}
	}
	txn := e.kv.NewTxn()
	txn.ReadThrough(st.InFlight.Through(buckets))
	committed := false // or handed to the committer
	defer func() {
		if !committed {
			txn.Abort()
		}
	}()
	info := sch.Info
	mem := e.opts.Allocator
	changelog := &pkChangelog{t: t, sch: sch, mem: mem, writer: writer, buckets: buckets}
	defer func() {
		if !committed {
			changelog.Release()
		}
	}()
	var key []byte
	var err error
	for k, b := range buckets {
		keys := make([][]byte, len(ops[k]))
		var wanted [][]byte
		for j, o := range ops[k] {
			if o.row == nil {
				continue
			}
			if key, err = st.Key(key[:0], o.row); err != nil {
				return nil, errs.New(errs.Invalid, "write to %s: %w", info.Path(), err)
			}
			keys[j] = kv.RowKey(nil, info.TableID, b, key)
			if o.del || wr.NeedsOld() {
				wanted = append(wanted, keys[j])
			}
		}
		if err := txn.Prefetch(wanted); err != nil {
			return nil, err
		}
		cl := newChangelogBuilder(info.ArrowSchema(), mem)
		var rows int64 // keys added minus keys removed
		for j, o := range ops[k] {
			if o.row == nil {
				continue
			}
			rk := keys[j]
			var old row.Row
			if o.del || wr.NeedsOld() {
				if old, err = e.readRow(txn, rk, sch.Types); err != nil {
					cl.release()
					return nil, err
				}
			}
			var stored row.Row
			var changes []merge.Change
			remove := false
			if o.del {
				remove, stored, changes, err = wr.Delete(old)
			} else {
				nextID := st.NextID
				if o.id != 0 {
					nextID = func() (int64, error) { return o.id, nil }
				}
				stored, changes, err = wr.Upsert(old, o.row, nextID)
			}
			if err != nil {
				cl.release()
				return nil, err
			}
			switch {
			case remove:
				err = txn.Delete(rk)
				rows += rowsDelta(old != nil, false)
			case stored != nil:
				err = txn.Set(rk, row.Encode(nil, info.SchemaID, sch.Types, stored))
				rows += rowsDelta(old != nil, true)
			}
			if err != nil {
				cl.release()
				return nil, err
			}
			cl.add(changes)
		}
		changelog.parts = append(changelog.parts, cl.finish())
		if st.Counted {
			txn.CountRows(info.TableID, b, rows)
		}
	}
	// Done reading: holding on to the earlier txns would keep every txn
	// since the table opened reachable, each through the one after it.
	txn.ReadThrough(nil)
	p := inflight.New(txn, info.TableID, info.Path().String(), buckets, changelog)
	if writer.ID != "" {
		// An idempotent writer's batch is appended before the buckets are
		// unlocked, so that its retry finds it in the log (Previous) and
		// its sequence is checked before anything builds on it; after the
		// changelogs of the writes merged before it.
		st.InFlight.WaitAppended(buckets)
		if err := p.Append(); err != nil {
			return nil, err
		}
	}
	committed = true
	st.InFlight.Add(p)
	return p, nil
}

// readRow returns the stored row under key, or nil.
func (e *Engine) readRow(txn *kv.Txn, key []byte, types []arrow.DataType) (row.Row, error) {
	v, ok, err := txn.Get(key)
	if err != nil || !ok {
		return nil, err
	}
	_, r, err := row.Decode(v, types)
	return r, err
}

// changelogBuilder collects the changes of one bucket's part of a write into
// a changelog batch.
type changelogBuilder struct {
	b     *array.RecordBuilder
	kinds []byte
}

func newChangelogBuilder(schema *arrow.Schema, mem memory.Allocator) *changelogBuilder {
	return &changelogBuilder{b: array.NewRecordBuilder(mem, schema), kinds: []byte{}}
}

func (c *changelogBuilder) add(changes []merge.Change) {
	for _, ch := range changes {
		row.AppendRow(c.b, ch.Row)
		c.kinds = append(c.kinds, byte(ch.Kind))
	}
}

func (c *changelogBuilder) release() { c.b.Release() }

// finish returns the changes as a batch of the changelog; a write that
// changed nothing still yields one, without rows, which takes one offset.
func (c *changelogBuilder) finish() changelogPart {
	rec := c.b.NewRecordBatch()
	c.b.Release()
	return changelogPart{rec: rec, kinds: c.kinds}
}

// changelogPart is the changelog of one bucket's part of a write.
type changelogPart struct {
	rec   arrow.RecordBatch
	kinds []byte
}

// encode turns the part into a changelog frame.
func (c changelogPart) encode(enc *logstore.Encoder, schemaID int32, w logstore.Writer) (*logstore.Batch, error) {
	meta := logstore.BatchMeta{SchemaID: schemaID, ChangeTypes: c.kinds, WriterID: w.ID, WriterSeq: -1, Stats: framestats.Compute(c.rec)}
	if w.ID != "" {
		meta.WriterSeq = w.Seq
	}
	return enc.Encode(c.rec, meta)
}

// pkChangelog is a write's changelog on its way to the log: inflight appends
// it in write order.
type pkChangelog struct {
	t       *table.Table
	sch     *table.Schema
	mem     memory.Allocator
	writer  logstore.Writer
	buckets []int
	parts   []changelogPart // per bucket, until appended
}

// Append encodes the changelog, one frame per bucket, and appends them as
// one atomic unit.
func (c *pkChangelog) Append() (*logstore.Pending, error) {
	t, info := c.t, c.sch.Info
	enc, err := c.sch.GetEncoder(t.Codec, c.mem)
	if err != nil {
		return nil, err
	}
	defer c.sch.PutEncoder(enc)
	parts := make([]logstore.Part, 0, len(c.parts))
	for i, p := range c.parts {
		b, err := p.encode(enc, info.SchemaID, c.writer)
		if err != nil {
			releaseBatches(parts)
			return nil, err
		}
		parts = append(parts, logstore.Part{Bucket: c.buckets[i], Batch: b})
	}
	c.Release()
	pending, err := t.Log.AppendAsync(parts, c.writer)
	if err != nil && t.Dropped.Load() {
		err = errs.New(errs.NotFound, "table %s was dropped", info.Path())
	}
	return pending, err
}

// Release lets go of the changelog's records.
func (c *pkChangelog) Release() {
	for _, p := range c.parts {
		p.rec.Release()
	}
	c.parts = nil
}
