package pkwrite

import (
	"context"
	"slices"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/merge"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
)

// UndoOps reads a bucket's changelog in [from, to) and returns, per key in
// order of first change, the write that restores the key's state at from.
// The caller holds the bucket's lock, with its changelog all durable.
func UndoOps(ctx context.Context, t *table.Table, sch *table.Schema, bucket int, from, to int64) ([]Op, error) {
	info, st := sch.Info, t.PK
	reader, err := t.Log.NewReader(bucket, from, table.Indexes(len(sch.Types)))
	if err != nil {
		return nil, err
	}
	defer reader.Close()
	seen := map[string]bool{}
	var ops []Op
	var key []byte
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := reader.Next(to)
		if err != nil || f == nil {
			return ops, err
		}
		rec, err := f.Record(sch.Decoder, info.ArrowSchema())
		if err != nil {
			return nil, err
		}
		skip := int(max(from-f.BaseOffset, 0))
		for i := skip; i < f.Rows; i++ {
			r := row.FromRecord(rec, i, nil)
			if key, err = st.Key(key[:0], r); err != nil {
				rec.Release()
				return nil, err
			}
			if seen[string(key)] {
				continue
			}
			seen[string(key)] = true
			upsert, del := merge.UndoOf(merge.Change{Kind: merge.Kind(f.ChangeTypes[i]), Row: r})
			switch {
			case del:
				ops = append(ops, Op{Del: true, Row: r})
			case upsert != nil:
				ops = append(ops, Op{Row: upsert})
			}
		}
		rec.Release()
	}
}

// Undo brings a primary-key table back to the state it had at the given
// per-bucket offsets (Fluss's undo recovery, FIP-21): for every key
// changed since, the first change after the offset tells its state then, and
// an OVERWRITE write restores it (or deletes the key). The undo writes go
// through the normal write path and appear in the changelog. No write of the
// table interleaves: the buckets stay locked from the read to the commit.
func (env *Env) Undo(ctx context.Context, req protocol.UndoRequest) (protocol.UndoResult, error) {
	info, path, err := env.Tables.Info(req.Table)
	if err != nil {
		return protocol.UndoResult{}, err
	}
	if path.View != "" || !info.IsPrimaryKey() {
		return protocol.UndoResult{}, errs.New(errs.FailedPrecondition, "undo of %s: only a primary-key table can be undone", path.FullName())
	}
	if info.IsPartitioned() {
		return env.undoPartitions(ctx, info, path, req)
	}
	if req.PartitionOffsets != nil {
		return protocol.UndoResult{}, errs.New(errs.InvalidArgument, `undo of %s: the table is not partitioned: give "offsets"`, path)
	}
	t, err := env.Tables.Table(info)
	if err != nil {
		return protocol.UndoResult{}, err
	}
	offsets, err := protocol.BucketOffsets(req.Offsets, "undo offsets")
	if err != nil {
		return protocol.UndoResult{}, err
	}
	return env.undoTable(ctx, t, path, offsets)
}

// undoPartitions undoes each partition a partitioned table's request names,
// in name order; each partition's undo is atomic, the whole is not.
func (env *Env) undoPartitions(ctx context.Context, info *catalog.TableInfo, path protocol.TablePath, req protocol.UndoRequest) (protocol.UndoResult, error) {
	if req.Offsets != nil {
		return protocol.UndoResult{}, errs.New(errs.InvalidArgument, `undo of %s: the table is partitioned: give "partition_offsets"`, path)
	}
	offsets, err := protocol.DecodePartitionOffsets(req.PartitionOffsets, "undo partition_offsets")
	if err != nil {
		return protocol.UndoResult{}, err
	}
	if len(offsets) == 0 {
		return protocol.UndoResult{}, errs.New(errs.InvalidArgument, "undo of %s: no offsets", path)
	}
	tables := make([]*table.Table, 0, len(offsets))
	for _, name := range offsets.Names() {
		t, _, err := env.Tables.PartitionByName(info, name)
		if err != nil {
			return protocol.UndoResult{}, err
		}
		tables = append(tables, t)
	}
	res := protocol.UndoResult{PartitionOffsets: protocol.PartitionOffsets{}}
	for i, name := range offsets.Names() {
		r, err := env.undoTable(ctx, tables[i], path, offsets[name])
		if err != nil {
			return protocol.UndoResult{}, err
		}
		res.UndoneKeys += r.UndoneKeys
		res.PartitionOffsets[name] = r.Offsets
	}
	return res, nil
}

// undoTable undoes the buckets of one table (or partition) to offsets.
func (env *Env) undoTable(ctx context.Context, t *table.Table, path protocol.TablePath, offsets map[int]int64) (protocol.UndoResult, error) {
	n := t.Current().Info.BucketCount()
	if len(offsets) == 0 {
		return protocol.UndoResult{}, errs.New(errs.InvalidArgument, "undo of %s: no offsets", path)
	}
	// Any subset of the buckets: a sink's subtasks each undo the buckets
	// they own (Fluss's UndoRecoveryOperator), while the others write.
	buckets := make([]int, 0, len(offsets))
	for b := range offsets {
		if b >= n {
			return protocol.UndoResult{}, errs.New(errs.InvalidArgument, "undo of %s: bucket %d does not exist (%d buckets)", path, b, n)
		}
		buckets = append(buckets, b)
	}
	slices.Sort(buckets) // the lock order
	st := t.PK
	st.Lock(buckets)
	defer st.Unlock(buckets)
	st.InFlight.Drain(buckets) // the changelog to undo is all durable, the state all committed
	sch := t.Current()         // fixed while the buckets are locked

	res := protocol.UndoResult{Offsets: map[int]int64{}}
	var touched []int
	var ops [][]Op
	for _, b := range buckets {
		first, hw := offsets[b], t.Log.HighWatermark(b)
		if first > hw || first < t.Log.EarliestOffset(b) {
			return protocol.UndoResult{}, errs.New(errs.OutOfRange, "undo of %s: offset %d of bucket %d is outside the retained changelog [%d, %d]", path, first, b, t.Log.EarliestOffset(b), hw)
		}
		bucketOps, err := UndoOps(ctx, t, sch, b, first, hw)
		if err != nil {
			return protocol.UndoResult{}, err
		}
		res.Offsets[b] = hw
		if len(bucketOps) > 0 {
			touched = append(touched, b)
			ops = append(ops, bucketOps)
			res.UndoneKeys += int64(len(bucketOps))
		}
	}
	if len(touched) == 0 {
		return res, nil
	}
	w, err := sch.Merger.NewWrite(nil, true)
	if err != nil {
		return protocol.UndoResult{}, err
	}
	ends, err := env.ApplyLocked(t, sch, w, touched, ops, logstore.Writer{})
	if err != nil {
		return protocol.UndoResult{}, err
	}
	for b, end := range ends {
		res.Offsets[b] = end
	}
	return res, nil
}
