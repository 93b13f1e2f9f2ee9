package scanread

import (
	"context"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
)

// Reading a partitioned table's lake (PROTOCOL.md §7.7): the lake knows its
// partitions by their values, fluxgate by their names, and reads match them
// by name, as Fluss's union read does; a partition only in the lake (dropped
// from fluxgate since) is read lake-only.

// LakePart is a partition of a lake snapshot.
type LakePart struct {
	Name   string
	Values lake.Partition
}

// LakeParts lists the partitions of a lake snapshot by name, in name order.
func LakeParts(ctx context.Context, lt *lake.Table, snapshotID int64, info *catalog.TableInfo) ([]LakePart, error) {
	parts, err := lt.Partitions(ctx, snapshotID)
	if err != nil {
		return nil, err
	}
	out := make([]LakePart, 0, len(parts))
	for _, p := range parts {
		name, err := lakePartitionName(info, p)
		if err != nil {
			return nil, err
		}
		out = append(out, LakePart{Name: name, Values: p})
	}
	slices.SortFunc(out, func(a, b LakePart) int { return strings.Compare(a.Name, b.Name) })
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

// lakePartition returns the lake's values of the partition a lake read is
// at (nil on a table without partitions); false when the snapshot has no
// files of it.
func (rs *Stream) lakePartition(ctx context.Context, lt *lake.Table) (lake.Partition, bool, error) {
	_, name := rs.partitionOf()
	if !rs.info.IsPartitioned() {
		return nil, true, nil
	}
	parts, err := LakeParts(ctx, lt, *rs.tk.LakeSnapshotID, rs.info)
	if err != nil {
		return nil, false, err
	}
	i, found := slices.BinarySearchFunc(parts, name, func(lp LakePart, name string) int { return strings.Compare(lp.Name, name) })
	if !found {
		return nil, false, nil
	}
	return parts[i].Values, true, nil
}

// useLakeOnly makes the stream read r, a range of a partition only in the
// lake, from the lake alone.
func (rs *Stream) useLakeOnly(r protocol.TicketRange) error {
	if rs.tk.View != protocol.ViewLake && rs.tk.View != protocol.ViewUnion {
		return errs.New(errs.Invalid, "ticket: partition %s is only in the lake; view %s does not read the lake", r.Partition, rs.tk.View)
	}
	info, err := rs.env.TableByID(rs.tk.TableID)
	if err != nil {
		return err
	}
	rs.t, rs.sch, rs.info, rs.lakeOnly = nil, nil, info, &r
	return nil
}

// readLake returns the lake table the stream reads: of its table, or of the
// partitioned table a lake-only range is of.
func (rs *Stream) readLake(ctx context.Context) (*lake.Table, error) {
	if rs.t == nil {
		return rs.env.PartitionedLake(ctx, rs.info)
	}
	return rs.env.LakeTable(ctx, rs.t)
}

// highWatermark is a bucket's high watermark for a batch's app_metadata;
// a partition only in the lake has no log, so its lake offset end stands.
func (rs *Stream) highWatermark(bucket int, end int64) int64 {
	if rs.t == nil {
		return end
	}
	return rs.t.Log.HighWatermark(bucket)
}
