package tables

import (
	"slices"
	"strings"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Info parses a table name (with an optional $view) and returns the table's
// definition.
func (s *Set) Info(name string) (*catalog.TableInfo, protocol.TablePath, error) {
	path, err := protocol.ParseTablePath(name)
	if err != nil {
		return nil, path, err
	}
	info, err := s.cat.Table(protocol.TablePath{Database: path.Database, Table: path.Table})
	return info, path, err
}

// Resolve parses a table name (with an optional $view) and returns the open
// table, of a table that is not partitioned.
func (s *Set) Resolve(name string) (*table.Table, protocol.TablePath, error) {
	info, path, err := s.Info(name)
	if err != nil {
		return nil, path, err
	}
	if info.IsPartitioned() {
		return nil, path, errs.New(errs.Unimplemented, "table %s is partitioned, and this request does not take partitioned tables yet", info.Path())
	}
	t, err := s.Table(info)
	return t, path, err
}

// Partitions returns the partitions a request names, in name order: all
// when it names none. A name that does not exist is errs.NotFound.
func (s *Set) Partitions(info *catalog.TableInfo, names []string) ([]*catalog.Partition, error) {
	if len(names) == 0 {
		return s.cat.Partitions(info.TableID), nil
	}
	var parts []*catalog.Partition
	for _, name := range names {
		p, err := s.cat.PartitionByName(info, name)
		if err != nil {
			return nil, err
		}
		if slices.Contains(parts, p) {
			return nil, errs.New(errs.InvalidArgument, "partition %q is listed twice", name)
		}
		parts = append(parts, p)
	}
	slices.SortFunc(parts, func(a, b *catalog.Partition) int {
		return strings.Compare(a.PartitionName, b.PartitionName)
	})
	return parts, nil
}
