package scanplan

import (
	"context"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Planning a scan of a partitioned table: the partitions it names (all by
// default), less those its filter rules out, each planned as a table of its
// own, (partition, bucket) ranges in name then bucket order.

// planPartitioned plans a scan of a partitioned table.
func (env *Env) planPartitioned(ctx context.Context, info *catalog.TableInfo, path protocol.TablePath, req protocol.ScanRequest) (*Plan, error) {
	view, vp, startup, err := env.planCommon(info, path, req)
	if err != nil {
		return nil, err
	}
	lk, err := env.planPartitionedLake(ctx, info, path, view, startup, req.Stop)
	if err != nil {
		return nil, err
	}
	for _, pos := range []protocol.Position{startup, req.Stop} {
		if err := env.checkPartitionOffsets(info, pos); err != nil {
			return nil, err
		}
	}
	parts, err := env.Tables.Partitions(info, req.Partitions)
	if err != nil {
		return nil, err
	}
	buckets, err := Buckets(info, req.Buckets)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Schema: vp.Schema, TableID: info.TableID, SchemaID: info.SchemaID, Buckets: info.BucketCount(),
		Partitions: []protocol.PartitionInfo{}}
	base := protocol.Ticket{V: 1, TableID: info.TableID, Table: path.FullName(), View: view, Columns: req.Columns, Filter: req.Filter, Compression: req.Compression}
	var ranges []protocol.TicketRange
	for _, p := range vp.Prune(info, parts) {
		t, err := env.Tables.Partition(p.PartitionID)
		if err != nil {
			return nil, err
		}
		pstart, pstop := partitionPosition(startup, p.PartitionName, protocol.PositionEarliest), partitionPosition(req.Stop, p.PartitionName, protocol.PositionLatest)
		var pl viewPlanner
		if lk != nil {
			pl = lk.planner(env, t, pstart, pstop)
		} else if pl, err = env.planner(ctx, t, path, view, pstart, pstop); err != nil {
			return nil, err
		}
		base.View, base.Snapshot = pl.view, pl.snapshotFirst
		for _, b := range buckets {
			r, err := pl.bucketRange(b)
			if err != nil {
				return nil, err
			}
			r.PartitionID, r.Partition = p.PartitionID, p.PartitionName
			ranges = append(ranges, r)
		}
		plan.Partitions = append(plan.Partitions, p.PartitionInfo)
	}
	if lk != nil {
		plan.LakeSnapshotID, base.LakeSnapshotID, base.View = &lk.snap.ID, &lk.snap.ID, lk.view
		if len(req.Partitions) == 0 {
			if ranges, err = env.planLakeOnly(ctx, info, vp, lk, buckets, ranges, plan); err != nil {
				return nil, err
			}
		}
	}
	plan.addTickets(base, ranges, req.Limit, !info.IsPrimaryKey() && lk == nil)
	return plan, nil
}

// checkPartitionOffsets checks a position of a scan of a partitioned table:
// offsets come per partition, of partitions that exist, of their buckets.
func (env *Env) checkPartitionOffsets(info *catalog.TableInfo, pos protocol.Position) error {
	switch pos.Mode {
	case protocol.PositionOffsets:
		return errs.New(errs.InvalidArgument, `table %s is partitioned: give its offsets as {"partition_offsets": {"<partition>": {"<bucket>": offset}}}`, info.Table)
	case protocol.PositionPartitionOffsets:
		for _, name := range pos.PartitionOffsets.Names() {
			if _, err := env.Tables.Catalog().PartitionByName(info, name); err != nil {
				return err
			}
			for b := range pos.PartitionOffsets[name] {
				if b >= info.BucketCount() {
					return errs.New(errs.InvalidArgument, "partition %s: bucket %d does not exist: %s has buckets 0 to %d", name, b, info.Table, info.BucketCount()-1)
				}
			}
		}
	}
	return nil
}

// checkNotPartitioned refuses the partition forms of a scan on a table that
// is not partitioned.
func checkNotPartitioned(info *catalog.TableInfo, req protocol.ScanRequest) error {
	if len(req.Partitions) > 0 {
		return catalog.NotPartitioned(info)
	}
	for _, pos := range []protocol.Position{req.Startup, req.Stop} {
		if pos.Mode == protocol.PositionPartitionOffsets {
			return errs.New(errs.InvalidArgument, `table %s is not partitioned: give its offsets as {"offsets": {"<bucket>": offset}}`, info.Table)
		}
	}
	return nil
}

// partitionPosition is a partitioned scan's position in one partition: its
// offsets there, or def for a partition the offsets do not name.
func partitionPosition(pos protocol.Position, name string, def protocol.PositionMode) protocol.Position {
	if pos.Mode != protocol.PositionPartitionOffsets {
		return pos
	}
	if offs, ok := pos.PartitionOffsets[name]; ok {
		return protocol.AtOffsets(offs)
	}
	return protocol.Position{Mode: def}
}
