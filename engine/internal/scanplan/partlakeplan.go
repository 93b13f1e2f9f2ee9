package scanplan

import (
	"context"
	"slices"
	"strings"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Planning a partitioned table's lake reads (PROTOCOL.md §7.7): one lake
// snapshot for all its partitions; a partition only in the lake (dropped
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
func (env *Env) planPartitionedLake(ctx context.Context, info *catalog.TableInfo, path protocol.TablePath, view string, startup, stop protocol.Position) (*partitionedLake, error) {
	union := view == protocol.ViewLog && startup.Mode == protocol.PositionFull && info.DatalakeEnabled()
	if view != protocol.ViewLake && !union {
		return nil, nil
	}
	snap, err := env.Lakes.PartitionedSnapshot(ctx, info)
	if err != nil {
		return nil, err
	}
	if view == protocol.ViewLake {
		if err := env.checkLakeRead(info, path, snap, startup, stop); err != nil {
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
func (pl *partitionedLake) planner(env *Env, t *table.Table, startup, stop protocol.Position) viewPlanner {
	if pl.view == protocol.ViewLake {
		return planLakeSnapshot(pl.snap, laketier.Offsets(pl.snap, t.Current().Info))
	}
	return env.planUnion(t, pl.snap, startup, stop)
}

// planLakeOnly adds to a plan the partitions that the lake snapshot holds
// and fluxgate no longer has (dropped since), that the filter may match:
// read from the lake alone, with the negative ids Fluss gives them (-1, -2,
// ... in name order), partitions and ranges then in name order.
func (env *Env) planLakeOnly(ctx context.Context, info *catalog.TableInfo, vp *viewplan.Plan, lk *partitionedLake, buckets []int, ranges []protocol.TicketRange, plan *Plan) ([]protocol.TicketRange, error) {
	names, err := env.Lakes.PartitionNames(ctx, info, lk.snap.ID)
	if err != nil {
		return nil, err
	}
	id := int64(0)
	for _, name := range names {
		if _, err := env.Tables.Catalog().PartitionByName(info, name); err == nil {
			continue
		}
		id--
		values, err := partition.Values(info.PartitionKeys, name)
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
		plan.Partitions = append(plan.Partitions, protocol.PartitionInfo{PartitionID: id, PartitionName: name, Spec: spec})
		for _, b := range buckets {
			end := int64(0) // a lake-only partition has no offsets
			ranges = append(ranges, protocol.TicketRange{PartitionID: id, Partition: name, Bucket: b, Stop: &end})
		}
	}
	slices.SortStableFunc(plan.Partitions, func(a, b protocol.PartitionInfo) int { return strings.Compare(a.PartitionName, b.PartitionName) })
	slices.SortStableFunc(ranges, func(a, b protocol.TicketRange) int { return strings.Compare(a.Partition, b.Partition) })
	return ranges, nil
}
