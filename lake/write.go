package lake

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/fluxgate-io/fluxgate/internal/arrowcast"
	"github.com/fluxgate-io/fluxgate/row"
)

// Commit is one tiering round's change to the lake.
type Commit struct {
	// Data yields the rows to add, in the lake schema (DataRecord builds
	// them), bucket after bucket, each bucket in offset order.
	Data iter.Seq2[arrow.RecordBatch, error]
	// Deletes yields the primary keys the round deletes, in the schema
	// DeleteSchema returns; their lake rows are retired with position
	// deletes, as are the earlier rows of the keys in Data. Nil for log
	// tables.
	Deletes iter.Seq2[arrow.RecordBatch, error]
	// Offsets are the round's end offsets of the buckets it read; buckets
	// it did not read keep the previous snapshot's offsets. Partitions are
	// the same for a partitioned table, by partition id.
	Offsets    map[int]int64
	Partitions map[int64]PartitionOffsets
	// Forget lists partitions dropped from fluxgate: their offsets leave
	// the snapshot, their rows stay in the lake.
	Forget []int64
}

// CommitStats say what a commit wrote.
type CommitStats struct {
	Files, Bytes, Rows, DeletedKeys int64
	// ExpireErr is why expiring old snapshots after the commit failed.
	ExpireErr error
}

// Commit writes c's files and commits them, with the merged offsets, as one
// snapshot. For a primary-key table the lake rows of the keys it deletes or
// writes anew are retired in the same snapshot by position deletes. Nothing
// is visible to readers unless the commit succeeds; files written by a
// failed commit are unreferenced and never read.
func (t *Table) Commit(ctx context.Context, c Commit) (*Snapshot, CommitStats, error) {
	var st CommitStats
	tbl := t.current()
	prev, err := snapshotOf(tbl.CurrentSnapshot())
	if err != nil {
		return nil, st, err
	}
	props := offsetProps(prev, c, len(t.m.parts) > 0)
	props[PropTableID], props[PropCommitUser] = strconv.FormatInt(t.tableID, 10), CommitUser

	pk := len(t.m.keys) > 0
	var idx *keyIndex
	if pk {
		if tbl, idx, err = t.keyIndex(ctx, tbl); err != nil {
			return nil, st, err
		}
	}
	var dataFiles []iceberg.DataFile
	if c.Data != nil {
		for df, err := range table.WriteRecords(ctx, tbl, t.m.lake, c.Data, table.WithClusteredWrite()) {
			if err == nil {
				df, err = recorded(tbl, df)
			}
			if err != nil {
				return nil, st, fmt.Errorf("write lake data files: %w", err)
			}
			dataFiles = append(dataFiles, df)
			st.Files++
			st.Bytes += df.FileSizeBytes()
			st.Rows += df.Count()
		}
	}
	var change *indexChange
	var deleteFiles []iceberg.DataFile
	if pk {
		if change, err = t.retire(ctx, tbl, idx, c.Deletes, dataFiles); err != nil {
			return nil, st, err
		}
		if deleteFiles, err = writePosDeletes(ctx, tbl, change.deletes); err != nil {
			return nil, st, fmt.Errorf("write lake delete files: %w", err)
		}
		for _, df := range deleteFiles {
			st.Files++
			st.Bytes += df.FileSizeBytes()
			st.DeletedKeys += df.Count()
		}
	}
	if hook := t.lake.beforeCommit; hook != nil && st.Files > 0 {
		if err := hook(); err != nil {
			return nil, st, fmt.Errorf("lake commit: %w", err)
		}
	}
	if change != nil {
		// Until the commit is known to stand, the index describes no
		// snapshot for sure: the next commit reloads it if this one fails.
		t.idx = nil
	}
	tx := tbl.NewTransaction()
	switch {
	case len(deleteFiles) > 0:
		err = tx.NewRowDelta(props).AddRows(dataFiles...).AddDeletes(deleteFiles...).Commit(ctx)
	case len(dataFiles) > 0:
		err = tx.AddDataFiles(ctx, dataFiles, props)
	default: // only offsets moved
		err = tx.AddFiles(ctx, nil, props, false)
	}
	if err != nil {
		return nil, st, fmt.Errorf("lake commit: %w", err)
	}
	committed, err := tx.Commit(ctx)
	if err != nil {
		return nil, st, fmt.Errorf("lake commit: %w", err)
	}
	if expired, err := expire(ctx, committed); err != nil {
		st.ExpireErr = err // the round's commit stands; the next one tries again
	} else {
		committed = expired
	}
	if change != nil {
		change.apply(committed.CurrentSnapshot().SnapshotID)
		t.idx = idx
	}
	t.setCurrent(committed)
	snap, err := snapshotOf(committed.CurrentSnapshot())
	return snap, st, err
}

// keyIndex returns the key index of tbl's current snapshot, loading it if
// the one held describes another. A lake that still has equality deletes
// is compacted first, which turns them into rows of known positions; the
// table returned is the one to commit on.
func (t *Table) keyIndex(ctx context.Context, tbl *table.Table) (*table.Table, *keyIndex, error) {
	if cur := tbl.CurrentSnapshot(); t.idx != nil && cur != nil && t.idx.snapshot == cur.SnapshotID {
		return tbl, t.idx, nil
	}
	idx, err := loadKeyIndex(ctx, tbl, t.m.keyIDs)
	if errors.Is(err, errEqualityDeletes) {
		if _, err = t.Compact(ctx, CompactOptions{}); err != nil {
			return nil, nil, fmt.Errorf("convert the lake's equality deletes: %w", err)
		}
		tbl = t.current()
		idx, err = loadKeyIndex(ctx, tbl, t.m.keyIDs)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("lake key index: %w", err)
	}
	t.idx = idx
	return tbl, idx, nil
}

// retire works out a commit's change to the key index: the rows of the
// deleted keys and the earlier rows of the keys in the new data files go.
func (t *Table) retire(ctx context.Context, tbl *table.Table, idx *keyIndex, deletes iter.Seq2[arrow.RecordBatch, error], dataFiles []iceberg.DataFile) (*indexChange, error) {
	change := idx.change()
	var key []byte
	vals := make([]any, len(t.m.keys))
	types := make([]arrow.DataType, len(t.m.keys))
	for rec, err := range orEmpty(deletes) {
		if err != nil {
			return nil, err
		}
		cols := make([]arrow.Array, len(t.m.keys))
		for j, k := range t.m.keys {
			cols[j] = rec.Column(rec.Schema().FieldIndices(k)[0])
			types[j] = cols[j].DataType()
		}
		for i := range int(rec.NumRows()) {
			for j, c := range cols {
				vals[j] = row.View(c, i)
			}
			if key, err = row.EncodeKey(key[:0], types, vals); err != nil {
				return nil, fmt.Errorf("lake delete: %w", err)
			}
			change.retire(key)
		}
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	for _, df := range dataFiles {
		if err := change.addFile(ctx, fs, df, t.m.keyIDs); err != nil {
			return nil, err
		}
	}
	return change, nil
}

// expire keeps the lake's history bounded, as Iceberg's own maintenance
// would (Fluss leaves it to the user): snapshots older than the table's
// history.expire.max-snapshot-age-ms (Iceberg's default, 5 days; settable
// as iceberg.history.expire.max-snapshot-age-ms) go, keeping at least
// history.expire.min-snapshots-to-keep, with the manifests and files only
// they referenced. Union reads hold a snapshot for seconds, not days.
func expire(ctx context.Context, tbl *table.Table) (*table.Table, error) {
	maxAge := tbl.Properties().GetInt64(table.MaxSnapshotAgeMsKey, table.MaxSnapshotAgeMsDefault)
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) < 2 || time.Now().UnixMilli()-snaps[0].TimestampMs <= maxAge {
		return tbl, nil
	}
	tx := tbl.NewTransaction()
	if err := tx.ExpireSnapshots(); err != nil {
		return nil, fmt.Errorf("expire lake snapshots: %w", err)
	}
	return tx.Commit(ctx)
}

// DataRecord makes a lake record from a record of the table's columns: the
// columns in lake types, then the bucket, each row's offset and the commit
// timestamp (unix ms) of each row. A value the lake cannot hold is a
// *RangeError.
func (t *Table) DataRecord(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, bucket int, offsets, commitMs []int64) (arrow.RecordBatch, error) {
	if err := CheckRange(rec); err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	cols := make([]arrow.Array, 0, t.m.lake.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for i, c := range rec.Columns() {
		lc, err := arrowcast.Cast(ctx, mem, c, t.m.lake.Field(i).Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", t.m.lake.Field(i).Name, err)
		}
		cols = append(cols, lc)
	}
	bb := array.NewInt32Builder(mem)
	defer bb.Release()
	ob := array.NewInt64Builder(mem)
	defer ob.Release()
	tb := array.NewTimestampBuilder(mem, SystemFields[2].Type.(*arrow.TimestampType))
	defer tb.Release()
	for k := range n {
		bb.Append(int32(bucket))
		ob.Append(offsets[k])
		tb.Append(arrow.Timestamp(commitMs[k] * 1000))
	}
	cols = append(cols, bb.NewArray(), ob.NewArray(), tb.NewArray())
	return array.NewRecordBatch(t.m.lake, cols, int64(n)), nil
}

// DeleteSchema is the schema of the records of Commit.Deletes: the primary
// key columns, in lake order.
func (t *Table) DeleteSchema() *arrow.Schema {
	var fields []arrow.Field
	for i, f := range t.m.schema.Fields() {
		if slices.Contains(t.m.keyIDs, f.ID) {
			fields = append(fields, t.m.lake.Field(i))
		}
	}
	return arrow.NewSchema(fields, nil)
}

// KeyRecord makes a record of DeleteSchema from a record of the table's
// columns: its primary-key columns, in lake types. Only the keys are
// converted, so a deleted row's other values need not fit the lake.
func (t *Table) KeyRecord(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	ds := t.DeleteSchema()
	cols := make([]arrow.Array, 0, ds.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, f := range ds.Fields() {
		c, err := arrowcast.Cast(ctx, mem, rec.Column(rec.Schema().FieldIndices(f.Name)[0]), f.Type)
		if err != nil {
			return nil, fmt.Errorf("key column %s: %w", f.Name, err)
		}
		cols = append(cols, c)
	}
	return array.NewRecordBatch(ds, cols, rec.NumRows()), nil
}

func orEmpty(recs iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	if recs == nil {
		return func(func(arrow.RecordBatch, error) bool) {}
	}
	return recs
}
