package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/scanplan"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Planning a scan is scanplan's; the engine resolves the table and hands
// it what planning reads of the engine (planEnv).

// PlanScan validates a scan and fixes its offsets into tickets.
func (e *Engine) PlanScan(ctx context.Context, req protocol.ScanRequest) (*ScanPlan, error) {
	info, path, err := e.resolveInfo(req.Table)
	if err != nil {
		return nil, err
	}
	return e.plan.Scan(ctx, info, path, req)
}

// ScanSchema returns the result schema of a scan without planning offsets or
// touching data.
func (e *Engine) ScanSchema(req protocol.ScanRequest) (*arrow.Schema, error) {
	info, path, err := e.resolveInfo(req.Table)
	if err != nil {
		return nil, err
	}
	return e.plan.Schema(info, path, req)
}

// planEnv is what planning uses of the engine: its catalog, tables and lake
// tier.
func (e *Engine) planEnv() scanplan.Env {
	return scanplan.Env{
		Cat:           e.cat,
		Open:          e.table,
		OpenPartition: e.openPartition,
		Partitions:    e.scanPartitions,
		Lake: scanplan.Lake{
			Snapshot:            e.lakeSnapshot,
			PartitionedSnapshot: e.partitionedLakeSnapshot,
			PartitionNames:      e.lakePartitionNames,
			Offsets:             lakeOffsets,
			NoSnapshot:          noLakeSnapshot,
		},
	}
}

// scanPartitions returns the partitions a scan names, in name order: all
// when it names none. A name that does not exist is errs.NotFound.
func (e *Engine) scanPartitions(info *catalog.TableInfo, names []string) ([]*catalog.Partition, error) {
	if len(names) == 0 {
		return e.cat.Partitions(info.TableID), nil
	}
	var parts []*catalog.Partition
	for _, name := range names {
		p, err := e.cat.PartitionByName(info, name)
		if err != nil {
			return nil, err
		}
		if slices.Contains(parts, p) {
			return nil, errs.New(errs.Invalid, "partition %q is listed twice", name)
		}
		parts = append(parts, p)
	}
	slices.SortFunc(parts, func(a, b *catalog.Partition) int {
		return strings.Compare(a.PartitionName, b.PartitionName)
	})
	return parts, nil
}

// resolveInfo parses a table name (with an optional $view) and returns the
// table's definition.
func (e *Engine) resolveInfo(name string) (*catalog.TableInfo, protocol.TablePath, error) {
	path, err := protocol.ParseTablePath(name)
	if err != nil {
		return nil, path, err
	}
	info, err := e.cat.Table(protocol.TablePath{Database: path.Database, Table: path.Table})
	return info, path, err
}
