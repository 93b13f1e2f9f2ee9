package engine

import (
	"context"
	"errors"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A partitioned table has no data of its own: each of its partitions is
// stored as a table of its own, under the definition catalog.ForPartition
// makes (the table's, with the partition's id), in e.tables by that id. DDL
// of partitions, and dropping a partitioned table, hold e.partMu, so that a
// partition is open once it is in the catalog and a dropped table's
// partitions are all found. A drop holds it for its catalog change only:
// removing the data waits for a lake round (removeTable), which must not
// stall creating partitions, and what is gone from the catalog is found by
// nothing new (its name may be created again at once, with a new id).

// CreatePartition creates a partition of a partitioned table and opens it.
// With ifNotExists an existing partition is returned instead of an error.
func (e *Engine) CreatePartition(ctx context.Context, table string, spec map[string]string, ifNotExists bool) (protocol.PartitionInfo, error) {
	info, err := e.partitioned(table)
	if err != nil {
		return protocol.PartitionInfo{}, err
	}
	_, p, err := e.createPartition(info, spec, ifNotExists)
	if err != nil {
		return protocol.PartitionInfo{}, err
	}
	return p.PartitionInfo, nil
}

// createPartition creates (or with ifNotExists finds) a partition and
// returns its open table.
func (e *Engine) createPartition(info *catalog.TableInfo, spec map[string]string, ifNotExists bool) (*table.Table, *catalog.Partition, error) {
	if err := e.checkPartitionTime(info, spec); err != nil {
		return nil, nil, err
	}
	e.partMu.Lock()
	defer e.partMu.Unlock()
	// The caller's definition may be older than the table's: altered since,
	// or dropped and re-created. The partition opens under the current one,
	// and only of the same table (both stay put under partMu).
	cur, err := e.cat.Table(info.Path())
	if err != nil {
		return nil, nil, err
	}
	if cur.TableID != info.TableID {
		return nil, nil, errs.New(errs.NotFound, "table %s (id %d) was dropped; a table of that name has been created since", info.Path(), info.TableID)
	}
	p, created, err := e.cat.CreatePartition(cur.Path(), spec, ifNotExists)
	if err != nil {
		return nil, nil, err
	}
	if !created {
		t, err := e.tableByID(p.PartitionID)
		return t, p, err
	}
	if e.partitionListed != nil {
		e.partitionListed()
	}
	t, err := e.openTable(cur.ForPartition(p))
	if err != nil {
		// Leave no half-created partition behind.
		_, dropErr := e.cat.DropPartition(info.Path(), spec, true)
		return nil, nil, errors.Join(err, dropErr)
	}
	return t, p, nil
}

// DropPartition drops a partition and deletes its data, as DropTable does a
// table's: open scans of it end with errs.NotFound, writes in flight commit
// first.
func (e *Engine) DropPartition(ctx context.Context, table string, spec map[string]string, ifExists bool) error {
	info, err := e.partitioned(table)
	if err != nil {
		return err
	}
	e.partMu.Lock()
	p, err := e.cat.DropPartition(info.Path(), spec, ifExists)
	e.partMu.Unlock()
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
// or a table that is not partitioned is errs.Precondition.
func (e *Engine) partitioned(name string) (*catalog.TableInfo, error) {
	path, err := protocol.ParseTablePath(name)
	if err != nil {
		return nil, err
	}
	if path.View != "" {
		return nil, errs.New(errs.Precondition, "%s is a view; partitions are managed on %s", path.FullName(), path)
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

// partitionTable returns the open table of a partition given by its values
// in key order. A missing partition is created when create is set, else it
// is errs.NotFound naming it.
func (e *Engine) partitionTable(info *catalog.TableInfo, values []string, create bool) (*table.Table, *catalog.Partition, error) {
	p, err := e.cat.PartitionByName(info, partition.Name(values))
	if err == nil {
		t, err := e.openPartition(p.PartitionID)
		return t, p, err
	}
	if !errs.Is(err, errs.NotFound) || !create {
		return nil, nil, err
	}
	spec := make(map[string]string, len(values))
	for i, k := range info.PartitionKeys {
		spec[k] = values[i]
	}
	return e.createPartition(info, spec, true)
}

// openPartition returns the open table of a partition the catalog lists. A
// partition is in the catalog a moment before it is open (createPartition
// holds partMu across both), so a miss waits for a creation in progress and
// looks once more. The caller must not hold partMu.
func (e *Engine) openPartition(id int64) (*table.Table, error) {
	t, err := e.tableByID(id)
	if err == nil || !errs.Is(err, errs.NotFound) {
		return t, err
	}
	e.partMu.Lock()
	//lint:ignore SA2001 empty on purpose: it only waits
	e.partMu.Unlock()
	return e.tableByID(id)
}

// partitionByName returns the open table of a partition given by name.
func (e *Engine) partitionByName(info *catalog.TableInfo, name string) (*table.Table, *catalog.Partition, error) {
	p, err := e.cat.PartitionByName(info, name)
	if err != nil {
		return nil, nil, err
	}
	t, err := e.openPartition(p.PartitionID)
	return t, p, err
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
