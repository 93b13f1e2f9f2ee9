package laketier

import (
	"context"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/row"
)

// The lake knows a partitioned table's partitions by their values,
// fluxgate by their names (PROTOCOL.md §7.7); reads match them by name, as
// Fluss's union read does.

// Part is a partition of a lake snapshot.
type Part struct {
	Name   string
	Values lake.Partition
}

// Parts lists the partitions of a lake snapshot by name, in name order.
func Parts(ctx context.Context, lt *lake.Table, snapshotID int64, info *catalog.TableInfo) ([]Part, error) {
	parts, err := lt.Partitions(ctx, snapshotID)
	if err != nil {
		return nil, err
	}
	out := make([]Part, 0, len(parts))
	for _, p := range parts {
		name, err := partitionName(info, p)
		if err != nil {
			return nil, err
		}
		out = append(out, Part{Name: name, Values: p})
	}
	slices.SortFunc(out, func(a, b Part) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// partitionName names a lake partition as a row of its values names its
// partition (package partition).
func partitionName(info *catalog.TableInfo, p lake.Partition) (string, error) {
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
