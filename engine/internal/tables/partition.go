package tables

import (
	"errors"

	"github.com/fluxgate-io/fluxgate/autopartition"
	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/partition"
)

// A partitioned table has no data of its own: each of its partitions is
// stored as a table of its own, under the definition catalog.ForPartition
// makes (the table's, with the partition's id), in the set by that id. DDL
// of partitions, and dropping a partitioned table, hold partMu
// (LockPartitions), so that a partition is open once it is in the catalog
// and a dropped table's partitions are all found. A drop holds it for its
// catalog change only: removing the data waits for a lake round, which must
// not stall creating partitions, and what is gone from the catalog is found
// by nothing new (its name may be created again at once, with a new id).

// LockPartitions holds off partition DDL (CreatePartition, and the
// engine's drops and alters) until UnlockPartitions.
func (s *Set) LockPartitions() { s.partMu.Lock() }

// UnlockPartitions lets partition DDL go on.
func (s *Set) UnlockPartitions() { s.partMu.Unlock() }

// Partition returns the open table of a partition the catalog lists. A
// partition is in the catalog a moment before it is open (CreatePartition
// holds partMu across both), so a miss waits for a creation in progress and
// looks once more. The caller must not hold partMu.
func (s *Set) Partition(id int64) (*table.Table, error) {
	t, err := s.ByID(id)
	if err == nil || !errs.Is(err, errs.NotFound) {
		return t, err
	}
	s.partMu.Lock()
	//lint:ignore SA2001 empty on purpose: it only waits
	s.partMu.Unlock()
	return s.ByID(id)
}

// PartitionByName returns the open table of a partition given by name.
func (s *Set) PartitionByName(info *catalog.TableInfo, name string) (*table.Table, *catalog.Partition, error) {
	p, err := s.cat.PartitionByName(info, name)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.Partition(p.PartitionID)
	return t, p, err
}

// PartitionOf returns the open table of a partition given by its values
// in key order (a written row's, a looked-up key's). A missing partition is
// created when create is set, else it is errs.NotFound naming it.
func (s *Set) PartitionOf(info *catalog.TableInfo, values []string, create bool) (*table.Table, *catalog.Partition, error) {
	t, p, err := s.PartitionByName(info, partition.Name(values))
	if err == nil || p != nil || !errs.Is(err, errs.NotFound) || !create {
		return t, p, err
	}
	spec := make(map[string]string, len(values))
	for i, k := range info.PartitionKeys {
		spec[k] = values[i]
	}
	return s.CreatePartition(info, spec, true)
}

// CreatePartition creates (or with ifNotExists finds) a partition and
// returns its open table.
func (s *Set) CreatePartition(info *catalog.TableInfo, spec map[string]string, ifNotExists bool) (*table.Table, *catalog.Partition, error) {
	if err := s.checkPartitionTime(info, spec); err != nil {
		return nil, nil, err
	}
	s.partMu.Lock()
	defer s.partMu.Unlock()
	// The caller's definition may be older than the table's: altered since,
	// or dropped and re-created. The partition opens under the current one,
	// and only of the same table (both stay put under partMu).
	cur, err := s.cat.Table(info.Path())
	if err != nil {
		return nil, nil, err
	}
	if cur.TableID != info.TableID {
		return nil, nil, errs.New(errs.NotFound, "table %s (id %d) was dropped; a table of that name has been created since", info.Path(), info.TableID)
	}
	p, created, err := s.cat.CreatePartition(cur.Path(), spec, ifNotExists)
	if err != nil {
		return nil, nil, err
	}
	if !created {
		t, err := s.ByID(p.PartitionID)
		return t, p, err
	}
	if s.PartitionListed != nil {
		s.PartitionListed()
	}
	t, err := s.Open(cur.ForPartition(p))
	if err != nil {
		// Leave no half-created partition behind.
		_, dropErr := s.cat.DropPartition(info.Path(), spec, true)
		return nil, nil, errors.Join(err, dropErr)
	}
	return t, p, nil
}

// Strategy returns a partitioned table's automatic partitioning; nil for a
// table that is not partitioned.
func (s *Set) Strategy(info *catalog.TableInfo) (*autopartition.Strategy, error) {
	if len(info.PartitionKeys) == 0 {
		return nil, nil
	}
	return autopartition.FromOptions(info.Options, info.PartitionKeys, s.opts.Zone)
}

// checkPartitionTime refuses a partition that a create-partition or a
// writer would create, if its time value does not match the table's time
// format or, with automatic partitioning on, the next check would drop it.
func (s *Set) checkPartitionTime(info *catalog.TableInfo, spec map[string]string) error {
	st, err := s.Strategy(info)
	if err != nil || st == nil {
		return err
	}
	// A malformed spec gets the catalog's error, as it would without this.
	if _, err := partition.Resolve(info.Table, info.PartitionKeys, spec, true); err != nil {
		return err
	}
	return st.CheckCreate(s.opts.Now(), spec)
}
