package scanread

import (
	"context"
	"slices"
	"strings"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Reading a partitioned table's lake (PROTOCOL.md §7.7): the lake knows its
// partitions by their values, fluxgate by their names, and reads match them
// by name, as Fluss's union read does; a partition only in the lake (dropped
// from fluxgate since) is read lake-only.

// lakePartition returns the lake's values of the partition a lake read is
// at (nil on a table without partitions); false when the snapshot has no
// files of it.
func (rs *Stream) lakePartition(ctx context.Context, lt *lake.Table) (lake.Partition, bool, error) {
	_, name := rs.partitionOf()
	if !rs.info.IsPartitioned() {
		return nil, true, nil
	}
	parts, err := lt.NamedPartitions(ctx, *rs.tk.LakeSnapshotID, rs.info)
	if err != nil {
		return nil, false, err
	}
	i, found := slices.BinarySearchFunc(parts, name, func(lp lake.NamedPartition, name string) int { return strings.Compare(lp.Name, name) })
	if !found {
		return nil, false, nil
	}
	return parts[i].Values, true, nil
}

// useLakeOnly makes the stream read r, a range of a partition only in the
// lake, from the lake alone.
func (rs *Stream) useLakeOnly(r protocol.TicketRange) error {
	if rs.tk.View != protocol.ViewLake && rs.tk.View != protocol.ViewUnion {
		return errs.New(errs.InvalidArgument, "ticket: partition %s is only in the lake; view %s does not read the lake", r.Partition, rs.tk.View)
	}
	info, err := rs.env.Tables.Catalog().TableByID(rs.tk.TableID)
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
		return rs.env.Lakes.PartitionedTable(ctx, rs.info)
	}
	return rs.env.Lakes.TableLake(ctx, rs.t, rs.t.Current().Info)
}

// highWatermark is a bucket's high watermark for a batch's app_metadata;
// a partition only in the lake has no log, so its lake offset end stands.
func (rs *Stream) highWatermark(bucket int, end int64) int64 {
	if rs.t == nil {
		return end
	}
	return rs.t.Log.HighWatermark(bucket)
}
