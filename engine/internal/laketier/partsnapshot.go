package laketier

import (
	"context"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/lake"
)

// Reading a partitioned table's lake (PROTOCOL.md §7.7): the lake knows its
// partitions by their values, fluxgate by their names, and reads match them
// by name, as Fluss's union read does; a partition only in the lake (dropped
// from fluxgate since) is read lake-only.

// PartitionedSnapshot returns the latest lake snapshot of a partitioned
// table, for all its partitions, or nil before the first commit.
func (l *Lakes) PartitionedSnapshot(ctx context.Context, info *catalog.TableInfo) (*lake.Snapshot, error) {
	return l.OwnerSnapshot(ctx, l.Partitioned(info.TableID), info)
}

// PartitionedTable returns the Iceberg table of partitioned table info, as
// it maps info's schema.
func (l *Lakes) PartitionedTable(ctx context.Context, info *catalog.TableInfo) (*lake.Table, error) {
	return l.open(ctx, l.Partitioned(info.TableID).tier, info)
}

// PartitionNames names the partitions of a partitioned table's lake
// snapshot, in name order: planning's lake-only partitions.
func (l *Lakes) PartitionNames(ctx context.Context, info *catalog.TableInfo, snapshotID int64) ([]string, error) {
	lt, err := l.PartitionedTable(ctx, info)
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
