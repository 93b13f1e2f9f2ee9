package engine

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

// partitionedLakeSnapshot returns the latest lake snapshot of a partitioned
// table, for all its partitions, or nil before the first commit.
func (e *Engine) partitionedLakeSnapshot(ctx context.Context, info *catalog.TableInfo) (*lake.Snapshot, error) {
	return e.ownerSnapshot(ctx, lakeOwner{tier: e.lakeParts.tier(info.TableID), id: info.TableID}, info)
}

// lakePartitionNames names the partitions of a partitioned table's lake
// snapshot, in name order: planning's lake-only partitions.
func (e *Engine) lakePartitionNames(ctx context.Context, info *catalog.TableInfo, snapshotID int64) ([]string, error) {
	lt, err := e.openLake(ctx, e.lakeParts.tier(info.TableID), info)
	if err != nil {
		return nil, err
	}
	parts, err := lakeParts(ctx, lt, snapshotID, info)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.name
	}
	return names, nil
}

// lakePartition returns the lake's values of the partition a lake read is
// at (nil on a table without partitions); false when the snapshot has no
// files of it.
func (rs *ReadStream) lakePartition(ctx context.Context, lt *lake.Table) (lake.Partition, bool, error) {
	_, name := rs.partitionOf()
	if !rs.info.IsPartitioned() {
		return nil, true, nil
	}
	parts, err := lakeParts(ctx, lt, *rs.tk.LakeSnapshotID, rs.info)
	if err != nil {
		return nil, false, err
	}
	i, found := slices.BinarySearchFunc(parts, name, func(lp lakePart, name string) int { return strings.Compare(lp.name, name) })
	if !found {
		return nil, false, nil
	}
	return parts[i].values, true, nil
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

// useLakeOnly makes the stream read r, a range of a partition only in the
// lake, from the lake alone.
func (rs *ReadStream) useLakeOnly(r protocol.TicketRange) error {
	if rs.tk.View != protocol.ViewLake && rs.tk.View != protocol.ViewUnion {
		return errs.New(errs.Invalid, "ticket: partition %s is only in the lake; view %s does not read the lake", r.Partition, rs.tk.View)
	}
	info, err := rs.e.cat.TableByID(rs.tk.TableID)
	if err != nil {
		return err
	}
	rs.t, rs.sch, rs.info, rs.lakeOnly = nil, nil, info, &r
	return nil
}

// readLake returns the lake table the stream reads: of its table, or of the
// partitioned table a lake-only range is of.
func (rs *ReadStream) readLake(ctx context.Context) (*lake.Table, error) {
	if rs.t == nil {
		return rs.e.openLake(ctx, rs.e.lakeParts.tier(rs.info.TableID), rs.info)
	}
	return rs.e.lakeTable(ctx, rs.t, rs.t.Current().Info)
}

// highWatermark is a bucket's high watermark for a batch's app_metadata;
// a partition only in the lake has no log, so its lake offset end stands.
func (rs *ReadStream) highWatermark(bucket int, end int64) int64 {
	if rs.t == nil {
		return end
	}
	return rs.t.Log.HighWatermark(bucket)
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
