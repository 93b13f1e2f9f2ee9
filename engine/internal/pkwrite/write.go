// Package pkwrite is the primary-key write pipeline: a write stream's batches
// (and undo's and insert-if-not-exists' rows) merged with the stored rows
// under the buckets' write locks, their changelog appended to the log, and
// the state committed once it is durable; a table whose write failed, or a
// broken state store, recovered (the state replayed from the changelog:
// table.Replay); undo.
package pkwrite

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/bucketing"
	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/inflight"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/merge"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
)

const colChangeType = viewplan.ColChangeType

// Write is a write stream's plan for a primary-key table: which table
// column each batch column fills, and the merge engine's write.
type Write struct {
	mode  string
	write *merge.Write

	// bound to the schema of the batches seen so far
	schema    *arrow.Schema
	cols      []int // table column of each batch column; -1 for _change_type
	changeCol int   // batch column of _change_type, or -1
	assigner  *bucketing.Assigner
}

// Open validates a write request for a primary-key table.
func Open(sch *table.Schema, req protocol.WriteRequest) (*Write, error) {
	info := sch.Info
	path := info.Path()
	if req.Mode == protocol.ModeAppend {
		return nil, errs.New(errs.FailedPrecondition, "table %s has a primary key: write with mode upsert, delete or changelog, not append", path)
	}
	if req.Mode == "" {
		req.Mode = protocol.ModeUpsert
	}
	var target []int
	for _, name := range req.Columns {
		c := info.ColumnIndex(name)
		if c < 0 {
			return nil, errs.New(errs.InvalidArgument, "write to %s: target column %s does not exist (columns: %s)", path, errs.Quote(name), viewplan.ColumnNames(info.ArrowSchema()))
		}
		if slices.Contains(target, c) {
			return nil, errs.New(errs.InvalidArgument, "write to %s: target column %s is listed twice", path, errs.Quote(name))
		}
		target = append(target, c)
	}
	slices.Sort(target)
	w, err := sch.Merger.NewWrite(target, req.MergeMode == "overwrite")
	if err != nil {
		return nil, err
	}
	return &Write{mode: req.Mode, write: w, changeCol: -1}, nil
}

// Changelog reports whether the stream writes changelog batches, whose
// _change_type column is not the table's.
func (p *Write) Changelog() bool { return p.mode == protocol.ModeChangelog }

// Submit applies one batch to t (opened with sch): under the write locks of
// the buckets it touches it merges each row with the stored one and appends
// the changelog it produced to the log as one atomic unit; the returned txn
// commits the new state once the changelog is durable. A batch without rows
// returns nil.
func (p *Write) Submit(env *Env, t *table.Table, sch *table.Schema, rec arrow.RecordBatch, writer logstore.Writer) (*inflight.Txn, error) {
	info := sch.Info
	if err := p.bind(info, rec.Schema()); err != nil {
		return nil, err
	}
	if err := checkNulls(info, rec, p.cols); err != nil {
		return nil, err
	}
	if rec.NumRows() == 0 {
		return nil, nil
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
	ops := make([][]Op, len(touched))
	width := len(info.Columns)
	slab := make([]any, int(rec.NumRows())*width) // the rows' values, one allocation
	for k, b := range touched {
		ops[k] = make([]Op, 0, len(byBucket[b]))
		for _, i := range byBucket[b] {
			o, err := p.rowOp(rec, i, slab[i*width:(i+1)*width:(i+1)*width])
			if err != nil {
				return nil, errs.New(errs.InvalidArgument, "write to %s: %w", info.Path(), err)
			}
			ops[k] = append(ops[k], o)
		}
	}
	return env.stage(t, sch, p.write, touched, ops, writer)
}

// bind maps the columns of a batch schema to the table's, checking names and
// types against what the write mode needs.
func (p *Write) bind(info *catalog.TableInfo, in *arrow.Schema) error {
	if p.schema != nil && p.schema.Equal(in) {
		return nil
	}
	path := info.Path()
	table := info.ArrowSchema()
	cols := make([]int, in.NumFields())
	changeCol := -1
	written := map[int]bool{}
	for j, f := range in.Fields() {
		if p.mode == protocol.ModeChangelog && f.Name == colChangeType {
			if f.Type.ID() != arrow.STRING {
				return errs.New(errs.InvalidArgument, "write to %s: column %s must be STRING, the batch has %s", path, colChangeType, f.Type)
			}
			cols[j], changeCol = -1, j
			continue
		}
		c := info.ColumnIndex(f.Name)
		if c < 0 {
			return errs.New(errs.InvalidArgument, "write to %s: the batch has column %s, which the table does not have (columns: %s)", path, errs.Quote(f.Name), viewplan.ColumnNames(table))
		}
		if written[c] {
			return errs.New(errs.InvalidArgument, "write to %s: column %s appears twice in the batch", path, errs.Quote(f.Name))
		}
		if !arrow.TypeEqual(f.Type, table.Field(c).Type) {
			return errs.New(errs.InvalidArgument, "write to %s: column %s is %s in the batch, the table wants %s (%s)", path, errs.Quote(f.Name), f.Type, table.Field(c).Type, info.Columns[c].Type)
		}
		written[c] = true
		cols[j] = c
	}
	if p.mode == protocol.ModeChangelog && changeCol < 0 {
		return errs.New(errs.InvalidArgument, "write to %s: a changelog batch needs a %s column", path, colChangeType)
	}
	for _, c := range info.PrimaryKeyIndexes() {
		if !written[c] {
			return errs.New(errs.InvalidArgument, "write to %s: the batch lacks primary-key column %s", path, errs.Quote(table.Field(c).Name))
		}
	}
	if p.mode != protocol.ModeDelete {
		for _, c := range p.write.Target() {
			if !written[c] {
				return errs.New(errs.InvalidArgument, "write to %s: the batch lacks column %s", path, errs.Quote(table.Field(c).Name))
			}
		}
		for c := range written {
			if info.Columns[c].Name == info.AutoIncrementColumn() {
				return errs.New(errs.FailedPrecondition, "write to %s: column %s is the auto-increment column; its values are assigned by the table and may not be written", path, errs.Quote(table.Field(c).Name))
			}
			if !slices.Contains(p.write.Target(), c) {
				return errs.New(errs.InvalidArgument, "write to %s: the batch has column %s, which is not among the columns written", path, errs.Quote(table.Field(c).Name))
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

// Op is one row of a write: an upsert of a full-width row (columns not
// written are nil) or a delete of the key it carries.
type Op struct {
	Del bool
	Row row.Row
	ID  int64 // the auto-increment id to give the key if it is new; 0 takes the next one
}

// rowOp returns row i of rec as an op whose row is r (all nil, as wide as
// the table). Its strings and binary values alias rec: the merge copies what
// it keeps (into encoded rows and the changelog) before the write returns.
func (p *Write) rowOp(rec arrow.RecordBatch, i int, r row.Row) (Op, error) {
	o := Op{Del: p.mode == protocol.ModeDelete, Row: r}
	for j, c := range p.cols {
		if c >= 0 {
			o.Row[c] = row.View(rec.Column(j), i)
		}
	}
	if p.changeCol >= 0 {
		ct := rec.Column(p.changeCol).(*array.String)
		if ct.IsNull(i) {
			return o, errs.New(errs.InvalidArgument, "row %d: %s is null", i, colChangeType)
		}
		switch v := ct.Value(i); v {
		case "insert", "update_after":
		case "delete":
			o.Del = true
		case "update_before":
			o.Row = nil // skipped: its update_after carries the new row
		default:
			return o, errs.New(errs.InvalidArgument, "row %d: %s %s: want insert, update_before, update_after or delete", i, colChangeType, errs.Quote(v))
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
			return errs.New(errs.InvalidArgument, "write to %s: column %s is %s but the batch has %d nulls in it", info.Path(), errs.Quote(info.Columns[c].Name), what, n)
		}
	}
	return nil
}
