package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/scanread"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Reading a partitioned table's lake (PROTOCOL.md §7.7): the lake knows its
// partitions by their values, fluxgate by their names, and reads match them
// by name, as Fluss's union read does; a partition only in the lake (dropped
// from fluxgate since) is read lake-only.

// partitionedLake is a $lake or union read of a partitioned table, planned
// on one lake snapshot for all its partitions.
type partitionedLake struct {
	view string // protocol.ViewLake or protocol.ViewUnion
	snap *lake.Snapshot
}

// planPartitionedLake returns how a scan of a partitioned table reads its
// lake; nil when it does not: it is neither $lake nor a full read of a
// lake-enabled log table (PROTOCOL.md §7.3), or no round has committed yet.
func (e *Engine) planPartitionedLake(ctx context.Context, info *catalog.TableInfo, path protocol.TablePath, view string, startup, stop protocol.Position) (*partitionedLake, error) {
	union := view == protocol.ViewLog && startup.Mode == protocol.PositionFull && info.DatalakeEnabled()
	if view != protocol.ViewLake && !union {
		return nil, nil
	}
	snap, err := e.ownerSnapshot(ctx, lakeOwner{tier: e.lakeParts.tier(info.TableID), id: info.TableID}, info)
	if err != nil {
		return nil, err
	}
	if view == protocol.ViewLake {
		if err := checkLakeRead(info, path, snap, startup, stop); err != nil {
			return nil, err
		}
		return &partitionedLake{view: view, snap: snap}, nil
	}
	if snap == nil {
		return nil, nil
	}
	return &partitionedLake{view: protocol.ViewUnion, snap: snap}, nil
}

// planner plans the ranges of partition t.
func (pl *partitionedLake) planner(e *Engine, t *table.Table, startup, stop protocol.Position) viewPlanner {
	if pl.view == protocol.ViewLake {
		return planLakeSnapshot(pl.snap, lakeOffsets(pl.snap, t.Current().Info))
	}
	return planUnion(e, t, pl.snap, startup, stop)
}

// planLakeOnly adds to a plan the partitions that the lake snapshot holds
// and fluxgate no longer has (dropped since), that the filter may match:
// read from the lake alone, with the negative ids Fluss gives them (-1, -2,
// ... in name order), partitions and ranges then in name order.
func (e *Engine) planLakeOnly(ctx context.Context, info *catalog.TableInfo, vp *viewplan.Plan, lk *partitionedLake, buckets []int, ranges []protocol.TicketRange, plan *ScanPlan) ([]protocol.TicketRange, error) {
	lt, err := e.openLake(ctx, e.lakeParts.tier(info.TableID), info)
	if err != nil {
		return nil, err
	}
	parts, err := scanread.LakeParts(ctx, lt, lk.snap.ID, info)
	if err != nil {
		return nil, err
	}
	id := int64(0)
	for _, p := range parts {
		if _, err := e.cat.PartitionByName(info, p.Name); err == nil {
			continue
		}
		id--
		values, err := partition.Values(info.PartitionKeys, p.Name)
		if err != nil {
			return nil, err
		}
		if !vp.MayMatchPartition(info, values) {
			continue
		}
		spec := protocol.PartitionSpec{}
		for i, k := range info.PartitionKeys {
			spec[k] = values[i]
		}
		plan.Partitions = append(plan.Partitions, protocol.PartitionInfo{PartitionID: id, PartitionName: p.Name, Spec: spec})
		for _, b := range buckets {
			end := int64(0) // a lake-only partition has no offsets
			ranges = append(ranges, protocol.TicketRange{PartitionID: id, Partition: p.Name, Bucket: b, Stop: &end})
		}
	}
	slices.SortStableFunc(plan.Partitions, func(a, b protocol.PartitionInfo) int { return strings.Compare(a.PartitionName, b.PartitionName) })
	slices.SortStableFunc(ranges, func(a, b protocol.TicketRange) int { return strings.Compare(a.Partition, b.Partition) })
	return ranges, nil
}

// checkLakeOnly checks a ticket range of a partition only in the lake: of a
// partitioned table, by a name fluxgate no longer has.
func (e *Engine) checkLakeOnly(tableID int64, name string) error {
	info, err := e.cat.TableByID(tableID)
	if err != nil {
		return err
	}
	if !info.IsPartitioned() {
		return errs.New(errs.Invalid, "ticket: table %s is not partitioned; a negative partition_id names a partition only in the lake", info.Table)
	}
	if _, err := partition.Values(info.PartitionKeys, name); err != nil {
		return err
	}
	return nil
}

// lakePartitionOffsets answers list-offsets of a partitioned table's $lake:
// its lake snapshot's offsets of the partitions and buckets asked, as for
// a table (only "latest"; 0 for a bucket the lake holds nothing of).
func (e *Engine) lakePartitionOffsets(ctx context.Context, info *catalog.TableInfo, path protocol.TablePath, parts []*catalog.Partition, buckets []int, at protocol.Position) (protocol.OffsetsResult, error) {
	if at.Mode != protocol.PositionLatest {
		return protocol.OffsetsResult{}, errs.New(errs.Precondition, "%s: list-offsets of the lake view knows \"latest\" (the lake snapshot's offsets) only", path.FullName())
	}
	snap, err := e.ownerSnapshot(ctx, lakeOwner{tier: e.lakeParts.tier(info.TableID), id: info.TableID}, info)
	if err != nil {
		return protocol.OffsetsResult{}, err
	}
	if snap == nil {
		return protocol.OffsetsResult{}, noLakeSnapshot(info, path)
	}
	res := protocol.OffsetsResult{PartitionOffsets: protocol.PartitionOffsets{}}
	for _, p := range parts {
		tiered := lakeOffsets(snap, info.ForPartition(p))
		out := make(map[int]int64, len(buckets))
		for _, b := range buckets {
			out[b] = tiered[b]
		}
		res.PartitionOffsets[p.PartitionName] = out
	}
	return res, nil
}
