package scanplan

import (
	"context"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Env is what planning uses of the engine, built once by it: the catalog,
// the open tables, and the lake tier, which the engine keeps.
type Env struct {
	Cat *catalog.Catalog
	// Open returns the open table of a table that is not partitioned.
	Open func(info *catalog.TableInfo) (*table.Table, error)
	// OpenPartition returns the open table of a partition the catalog lists.
	OpenPartition func(partitionID int64) (*table.Table, error)
	// Partitions returns the partitions a scan names, in name order: all
	// when it names none.
	Partitions func(info *catalog.TableInfo, names []string) ([]*catalog.Partition, error)
	Lake       Lake
}

// Lake is what planning reads of the lake tier.
type Lake struct {
	// Snapshot returns the latest lake snapshot t is in (a partition's, its
	// partitioned table's), nil before the first commit.
	Snapshot func(ctx context.Context, t *table.Table) (*lake.Snapshot, error)
	// PartitionedSnapshot returns the latest lake snapshot of a partitioned
	// table, for all its partitions, nil before the first commit.
	PartitionedSnapshot func(ctx context.Context, info *catalog.TableInfo) (*lake.Snapshot, error)
	// PartitionNames names the partitions of a partitioned table's lake
	// snapshot, in name order.
	PartitionNames func(ctx context.Context, info *catalog.TableInfo, snapshotID int64) ([]string, error)
	// Offsets are the offsets snap holds of the buckets of info's table.
	Offsets func(snap *lake.Snapshot, info *catalog.TableInfo) map[int]int64
	// NoSnapshot is the error of a read of path's lake, which has no snapshot.
	NoSnapshot func(info *catalog.TableInfo, path protocol.TablePath) error
}
