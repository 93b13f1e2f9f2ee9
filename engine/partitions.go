package engine

import (
	"context"
	"errors"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Partition DDL: a partition is a table of its own, opened and created by
// the open tables (internal/tables: partition.go says how partition DDL and
// drops are ordered).

// CreatePartition creates a partition of a partitioned table and opens it.
// With ifNotExists an existing partition is returned instead of an error.
func (e *Engine) CreatePartition(ctx context.Context, table string, spec map[string]string, ifNotExists bool) (protocol.PartitionInfo, error) {
	info, err := e.partitioned(table)
	if err != nil {
		return protocol.PartitionInfo{}, err
	}
	_, p, err := e.tables.CreatePartition(info, spec, ifNotExists)
	if err != nil {
		return protocol.PartitionInfo{}, err
	}
	return p.PartitionInfo, nil
}

// DropPartition drops a partition and deletes its data, as DropTable does a
// table's: open scans of it end with errs.NotFound, writes in flight commit
// first.
func (e *Engine) DropPartition(ctx context.Context, table string, spec map[string]string, ifExists bool) error {
	info, err := e.partitioned(table)
	if err != nil {
		return err
	}
	e.tables.LockPartitions()
	p, err := e.cat.DropPartition(info.Path(), spec, ifExists)
	e.tables.UnlockPartitions()
	if err != nil || p == nil {
		return err
	}
	return e.removeTable(ctx, info.ForPartition(p))
}

// ListPartitions lists a partitioned table's partitions in name order, those
// matching a partial spec (nil: all).
func (e *Engine) ListPartitions(table string, partial map[string]string) ([]protocol.PartitionInfo, error) {
	info, err := e.partitioned(table)
	if err != nil {
		return nil, err
	}
	if err := partition.CheckPartial(info.Table, info.PartitionKeys, partial); err != nil {
		return nil, err
	}
	out := []protocol.PartitionInfo{}
	for _, p := range e.cat.Partitions(info.TableID) {
		if partition.Matches(info.PartitionKeys, p.Values(), partial) {
			out = append(out, p.PartitionInfo)
		}
	}
	return out, nil
}

// partitioned returns the definition of a partitioned table by name; a view
// or a table that is not partitioned is errs.FailedPrecondition.
func (e *Engine) partitioned(name string) (*catalog.TableInfo, error) {
	path, err := protocol.ParseTablePath(name)
	if err != nil {
		return nil, err
	}
	if path.View != "" {
		return nil, errs.New(errs.FailedPrecondition, "%s is a view; partitions are managed on %s", path.FullName(), path)
	}
	info, err := e.cat.Table(path)
	if err != nil {
		return nil, err
	}
	if !info.IsPartitioned() {
		return nil, catalog.NotPartitioned(info)
	}
	return info, nil
}

// physicalInfos returns the definitions data is stored under: of each table
// that is not partitioned, and of each partition of those that are.
func (e *Engine) physicalInfos(infos []*catalog.TableInfo) []*catalog.TableInfo {
	out := make([]*catalog.TableInfo, 0, len(infos))
	for _, info := range infos {
		if !info.IsPartitioned() {
			out = append(out, info)
			continue
		}
		for _, p := range e.cat.Partitions(info.TableID) {
			out = append(out, info.ForPartition(p))
		}
	}
	return out
}

// removePartitions deletes the data of a dropped partitioned table's
// partitions (listed before its drop, under e.partMu).
func (e *Engine) removePartitions(ctx context.Context, info *catalog.TableInfo, parts []*catalog.Partition) error {
	var err error
	for _, p := range parts {
		err = errors.Join(err, e.removeTable(ctx, info.ForPartition(p)))
	}
	return err
}
