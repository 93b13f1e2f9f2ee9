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
