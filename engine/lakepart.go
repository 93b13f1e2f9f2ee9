package engine

import (
	"context"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Reading a partitioned table's lake (PROTOCOL.md §7.7): the lake knows its
// partitions by their values, fluxgate by their names, and reads match them
// by name, as Fluss's union read does; a partition only in the lake (dropped
// from fluxgate since) is read lake-only.

// partitionedLakeSnapshot returns the latest lake snapshot of a partitioned
// table, for all its partitions, or nil before the first commit.
func (e *Engine) partitionedLakeSnapshot(ctx context.Context, info *catalog.TableInfo) (*lake.Snapshot, error) {
	return e.lakes.OwnerSnapshot(ctx, e.lakes.Partitioned(info.TableID), info)
}

// lakePartitionNames names the partitions of a partitioned table's lake
// snapshot, in name order: planning's lake-only partitions.
func (e *Engine) lakePartitionNames(ctx context.Context, info *catalog.TableInfo, snapshotID int64) ([]string, error) {
	lt, err := e.lakes.Open(ctx, e.lakes.Partitioned(info.TableID).Tier, info)
	if err != nil {
		return nil, err
	}
	parts, err := lt.NamedPartitions(ctx, snapshotID, info)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.Name
	}
	return names, nil
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
	snap, err := e.partitionedLakeSnapshot(ctx, info)
	if err != nil {
		return protocol.OffsetsResult{}, err
	}
	if snap == nil {
		return protocol.OffsetsResult{}, laketier.NoSnapshot(info, path)
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
