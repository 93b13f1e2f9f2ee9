package engine

import (
	"context"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/engine/internal/scanplan"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// ListOffsets answers list-offsets: per bucket the earliest retained offset,
// the high watermark ("latest"), or the first offset committed at or after a
// timestamp (the high watermark when there is none, also for timestamps in
// the future).
func (e *Engine) ListOffsets(ctx context.Context, req protocol.OffsetsRequest) (protocol.OffsetsResult, error) {
	startup := protocol.Position{Mode: protocol.PositionLatest}
	if len(req.At) > 0 {
		if err := startup.UnmarshalJSON(req.At); err != nil || startup.Mode == protocol.PositionFull || startup.Mode == protocol.PositionOffsets || startup.Mode == protocol.PositionPartitionOffsets {
			return protocol.OffsetsResult{}, errs.New(errs.InvalidArgument, `list-offsets "at": want "earliest", "latest" or {"timestamp": ms}`)
		}
	}
	if info, path, err := e.tables.Info(req.Table); err == nil && info.IsPartitioned() {
		return e.partitionOffsets(ctx, info, path, req, startup)
	} else if err == nil && len(req.Partitions) > 0 {
		return protocol.OffsetsResult{}, catalog.NotPartitioned(info)
	}
	t, path, err := e.tables.Resolve(req.Table)
	if err != nil {
		return protocol.OffsetsResult{}, err
	}
	info := t.Current().Info
	buckets, err := scanplan.Buckets(info, req.Buckets)
	if err != nil {
		return protocol.OffsetsResult{}, err
	}
	out := make(map[int]int64, len(buckets))
	if path.View == "lake" {
		// The lake's latest offsets are its snapshot's: where tiering and a
		// union read's log part go on from.
		snap, err := lakeOffsetsSnapshot(info, path, startup, func() (*lake.Snapshot, error) { return e.lakes.Snapshot(ctx, t) })
		if err != nil {
			return protocol.OffsetsResult{}, err
		}
		for _, b := range buckets {
			out[b] = snap.Offsets[b]
		}
		return protocol.OffsetsResult{Offsets: out}, nil
	}
	if err := e.logOffsets(t, buckets, startup, out); err != nil {
		return protocol.OffsetsResult{}, err
	}
	return protocol.OffsetsResult{Offsets: out}, nil
}

// logOffsets puts the offset of each bucket of t at a position in out.
func (e *Engine) logOffsets(t *table.Table, buckets []int, at protocol.Position, out map[int]int64) error {
	for _, b := range buckets {
		off, err := scanplan.StartOffset(t, b, at)
		if err != nil {
			return err
		}
		out[b] = off
	}
	return nil
}

// partitionOffsets answers list-offsets of a partitioned table: per
// partition asked (all by default), per bucket. $changelog reads the
// partitions' logs, so its offsets are the table's.
func (e *Engine) partitionOffsets(ctx context.Context, info *catalog.TableInfo, path protocol.TablePath, req protocol.OffsetsRequest, at protocol.Position) (protocol.OffsetsResult, error) {
	parts, err := e.tables.Partitions(info, req.Partitions)
	if err != nil {
		return protocol.OffsetsResult{}, err
	}
	buckets, err := scanplan.Buckets(info, req.Buckets)
	if err != nil {
		return protocol.OffsetsResult{}, err
	}
	if path.View == "lake" {
		return e.lakePartitionOffsets(ctx, info, path, parts, buckets, at)
	}
	res := protocol.OffsetsResult{PartitionOffsets: protocol.PartitionOffsets{}}
	for _, p := range parts {
		t, err := e.tables.Partition(p.PartitionID)
		if err != nil {
			return protocol.OffsetsResult{}, err
		}
		out := make(map[int]int64, len(buckets))
		if err := e.logOffsets(t, buckets, at, out); err != nil {
			return protocol.OffsetsResult{}, err
		}
		res.PartitionOffsets[p.PartitionName] = out
	}
	return res, nil
}

// lakePartitionOffsets answers list-offsets of a partitioned table's $lake:
// its lake snapshot's offsets of the partitions and buckets asked, as for
// a table (only "latest"; 0 for a bucket the lake holds nothing of).
func (e *Engine) lakePartitionOffsets(ctx context.Context, info *catalog.TableInfo, path protocol.TablePath, parts []*catalog.Partition, buckets []int, at protocol.Position) (protocol.OffsetsResult, error) {
	snap, err := lakeOffsetsSnapshot(info, path, at, func() (*lake.Snapshot, error) { return e.lakes.PartitionedSnapshot(ctx, info) })
	if err != nil {
		return protocol.OffsetsResult{}, err
	}
	res := protocol.OffsetsResult{PartitionOffsets: protocol.PartitionOffsets{}}
	for _, p := range parts {
		tiered := laketier.Offsets(snap, info.ForPartition(p))
		out := make(map[int]int64, len(buckets))
		for _, b := range buckets {
			out[b] = tiered[b]
		}
		res.PartitionOffsets[p.PartitionName] = out
	}
	return res, nil
}

// lakeOffsetsSnapshot returns the lake snapshot that list-offsets of info's
// $lake answers at: it knows "latest" only, and the table must have one.
func lakeOffsetsSnapshot(info *catalog.TableInfo, path protocol.TablePath, at protocol.Position, latest func() (*lake.Snapshot, error)) (*lake.Snapshot, error) {
	if at.Mode != protocol.PositionLatest {
		return nil, errs.New(errs.FailedPrecondition, "%s: list-offsets of the lake view knows \"latest\" (the lake snapshot's offsets) only", path.FullName())
	}
	snap, err := latest()
	if err == nil && snap == nil {
		err = laketier.NoSnapshot(info, path)
	}
	return snap, err
}
