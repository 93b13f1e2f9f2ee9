package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
)

// Reading a partitioned table's lake (PROTOCOL.md §7.7): the lake knows its
// partitions by their values, fluxgate by their names, and reads match them
// by name, as Fluss's union read does; a partition only in the lake (dropped
// from fluxgate since) is read lake-only.

// lakePart is a partition of a lake snapshot.
type lakePart struct {
	name   string
	values lake.Partition
}

// lakeParts lists the partitions of a lake snapshot by name, in name order.
func lakeParts(ctx context.Context, lt *lake.Table, snapshotID int64, info *catalog.TableInfo) ([]lakePart, error) {
	parts, err := lt.Partitions(ctx, snapshotID)
	if err != nil {
		return nil, err
	}
	out := make([]lakePart, 0, len(parts))
	for _, p := range parts {
		name, err := lakePartitionName(info, p)
		if err != nil {
			return nil, err
		}
		out = append(out, lakePart{name: name, values: p})
	}
	slices.SortFunc(out, func(a, b lakePart) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// lakePartitionName names a lake partition as a row of its values names
// its partition (package partition).
func lakePartitionName(info *catalog.TableInfo, p lake.Partition) (string, error) {
	values := make([]string, len(p))
	for i, k := range info.PartitionKeyIndexes() {
		f := info.ArrowSchema().Field(k)
		b := array.NewBuilder(memory.DefaultAllocator, f.Type)
		row.Append(b, p[i])
		arr := b.NewArray()
		b.Release()
		v, err := partition.ValueString(f.Name, arr, 0)
		arr.Release()
		if err != nil {
			return "", err
		}
		values[i] = v
	}
	return partition.Name(values), nil
}

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
func (pl *partitionedLake) planner(e *Engine, t *table, startup, stop protocol.Position) viewPlanner {
	if pl.view == protocol.ViewLake {
		return planLakeSnapshot(pl.snap, lakeOffsets(pl.snap, t.current().info))
	}
	return planUnion(e, t, pl.snap, startup, stop)
}

// lakePartition returns the lake's values of the partition a lake read is
// at (nil on a table without partitions); false when the snapshot has no
// files of it.
func (rs *ReadStream) lakePartition(ctx context.Context, lt *lake.Table) (lake.Partition, bool, error) {
	p := rs.info.Partition()
	if p == nil {
		return nil, true, nil
	}
	parts, err := lakeParts(ctx, lt, *rs.tk.LakeSnapshotID, rs.info)
	if err != nil {
		return nil, false, err
	}
	i, found := slices.BinarySearchFunc(parts, p.PartitionName, func(lp lakePart, name string) int { return strings.Compare(lp.name, name) })
	if !found {
		return nil, false, nil
	}
	return parts[i].values, true, nil
}
