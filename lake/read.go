package lake

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/arrowcast"
	"github.com/fluxgate-io/fluxgate/predicate"
)

// Field returns the field a scan returns for a column of the lake view:
// table columns in the table's types, system columns as SystemFields.
func (t *Table) Field(name string) (arrow.Field, bool) {
	if i := t.m.table.FieldIndices(name); len(i) == 1 {
		return t.m.table.Field(i[0]), true
	}
	for _, f := range SystemFields {
		if f.Name == name {
			return f, true
		}
	}
	return arrow.Field{}, false
}

// Scan reads one bucket of a snapshot (of partition part on a partitioned
// table; nil otherwise): the named columns, of the rows that may match
// filter (nil: every row; the caller filters exactly), with the deletes
// applied, file after file in offset order. Only the files of that
// partition and bucket are opened. Each record is the caller's to release.
func (t *Table) Scan(ctx context.Context, mem memory.Allocator, snapshotID int64, part Partition, bucket int, columns []string, filter *predicate.Bound) (iter.Seq2[arrow.RecordBatch, error], error) {
	fields := make([]arrow.Field, len(columns))
	for i, c := range columns {
		f, ok := t.Field(c)
		if !ok {
			return nil, errs.New(errs.NotFound, "column %q is not in the lake table", c)
		}
		fields[i] = f
	}
	out := arrow.NewSchema(fields, nil)
	scan, tasks, err := t.plan(ctx, snapshotID, part, bucket, columns, filter)
	if err != nil {
		return nil, err
	}
	for _, task := range tasks {
		t.filesRead.Add(1)
		t.bytesRead.Add(task.File.FileSizeBytes())
	}
	absent := absentColumns(t.current(), snapshotID, columns)
	_, recs, err := scan.ReadTasks(ctx, tasks)
	if err != nil {
		scan.Close()
		return nil, fmt.Errorf("read lake scan: %w", err)
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		defer scan.Close()
		for rec, err := range recs {
			if err != nil {
				yield(nil, fmt.Errorf("read lake: %w", err))
				return
			}
			conv, err := convert(ctx, mem, rec, out, absent)
			rec.Release()
			if !yield(conv, err) || err != nil {
				return
			}
		}
	}, nil
}

// ScanStats say how many data files scans of the table opened, and their
// bytes: what pruning by partition and statistics left to read.
func (t *Table) ScanStats() (files, bytes int64) {
	return t.filesRead.Load(), t.bytesRead.Load()
}

// plan plans a bucket's scan of a snapshot: the files that may hold rows
// matching filter, pruned by partition and column statistics, in offset
// order. The caller closes the scan. A snapshot is read in the schema it was
// written with, so columns added since are absent from it: they read as
// NULL, and a filter on one prunes nothing.
func (t *Table) plan(ctx context.Context, snapshotID int64, part Partition, bucket int, columns []string, filter *predicate.Bound) (*table.Scan, []table.FileScanTask, error) {
	tbl := t.current()
	snap := tbl.SnapshotByID(snapshotID)
	if snap == nil {
		return nil, nil, errs.New(errs.NotFound, "lake snapshot %d does not exist (expired or never made)", snapshotID)
	}
	sc := snapshotSchema(tbl, snap)
	absent := absentColumns(tbl, snapshotID, columns)
	selected := []string{ColOffset} // never empty, which would select every column
	for _, c := range columns {
		if !absent[c] && c != ColOffset {
			selected = append(selected, c)
		}
	}
	expr := iceberg.BooleanExpression(iceberg.EqualTo(iceberg.Reference(ColBucket), int32(bucket)))
	if len(t.m.parts) > 0 {
		where, err := t.m.partitionFilter(part)
		if err != nil {
			return nil, nil, err
		}
		expr = iceberg.NewAnd(expr, where)
	}
	if filter != nil {
		prune := pruning(filter.Term())
		if _, err := iceberg.BindExpr(sc, prune, true); err == nil {
			expr = iceberg.NewAnd(expr, prune)
		}
	}
	scan := tbl.Scan(table.WithSnapshotID(snapshotID), table.WithSelectedFields(selected...), table.WithRowFilter(expr))
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		scan.Close()
		return nil, nil, fmt.Errorf("plan lake scan: %w", err)
	}
	if len(t.m.parts) > 0 {
		tasks, err = t.m.keepPartition(tbl.Metadata(), tasks, part)
		if err != nil {
			scan.Close()
			return nil, nil, err
		}
	}
	offsetID := t.m.fieldID(ColOffset)
	slices.SortStableFunc(tasks, func(a, b table.FileScanTask) int {
		return cmp.Compare(lowerBound(a.File, offsetID), lowerBound(b.File, offsetID))
	})
	return scan, tasks, nil
}

// absentColumns are the columns that a snapshot's schema lacks: added since.
func absentColumns(tbl *table.Table, snapshotID int64, columns []string) map[string]bool {
	snap := tbl.SnapshotByID(snapshotID)
	if snap == nil {
		return nil
	}
	sc := snapshotSchema(tbl, snap)
	absent := map[string]bool{}
	for _, c := range columns {
		if _, ok := sc.FindFieldByName(c); !ok {
			absent[c] = true
		}
	}
	return absent
}

// snapshotSchema is the schema a snapshot was written with.
func snapshotSchema(tbl *table.Table, snap *table.Snapshot) *iceberg.Schema {
	if snap.SchemaID != nil {
		for _, sc := range tbl.Metadata().Schemas() {
			if sc.ID == *snap.SchemaID {
				return sc
			}
		}
	}
	return tbl.Schema()
}

// lowerBound is a data file's lower bound of a long column, or 0.
func lowerBound(f iceberg.DataFile, id int) int64 {
	b := f.LowerBoundValues()[id]
	if len(b) != 8 {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(b))
}

// convert casts a scanned record's columns to the out schema's types; the
// absent columns (added after the record's snapshot) are NULL.
func convert(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, out *arrow.Schema, absent map[string]bool) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, out.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range out.Fields() {
		if absent[f.Name] {
			cols[i] = array.MakeArrayOfNull(mem, f.Type, int(rec.NumRows()))
			continue
		}
		idx := rec.Schema().FieldIndices(f.Name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("lake scan returned no column %s", f.Name)
		}
		c, err := arrowcast.Cast(ctx, mem, rec.Column(idx[0]), f.Type)
		if err != nil {
			return nil, fmt.Errorf("lake column %s: %w", f.Name, err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(out, cols, rec.NumRows()), nil
}
