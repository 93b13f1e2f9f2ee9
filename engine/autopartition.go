package engine

// Automatic partitions (PROTOCOL.md, "Automatic partitions"): for every
// table with table.auto-partition.enabled, a check creates the partitions of
// the current and next periods and drops those past the retention, through
// the same create and drop as the create-partition and drop-partition
// actions. It runs when such a table is created or altered, when the engine
// opens, and every AutoPartitionOptions.CheckInterval. What to create and
// drop, and whether a partition is out of date, is package autopartition's.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
)

// AutoPartitionOptions configure automatic partitions. The zero value means
// the defaults.
type AutoPartitionOptions struct {
	// CheckInterval is how often every auto-partitioned table is checked.
	// Default 10 minutes (Fluss's auto-partition.check.interval).
	CheckInterval time.Duration
	// Now is the clock that decides the current period. Default time.Now;
	// tests set a fake one.
	Now func() time.Time
	// Zone is the time zone of tables that do not set
	// table.auto-partition.time-zone. Default time.Local, the server's zone,
	// as Fluss's default is the coordinator's.
	Zone *time.Location
}

func (o AutoPartitionOptions) withDefaults() AutoPartitionOptions {
	if o.CheckInterval <= 0 {
		o.CheckInterval = 10 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Zone == nil {
		o.Zone = time.Local
	}
	return o
}

// CheckAutoPartitions runs one check of every auto-partitioned table. It
// runs every AutoPartitionOptions.CheckInterval; tests call it directly. A
// table whose check fails is logged and the others go on.
func (e *Engine) CheckAutoPartitions(ctx context.Context) {
	infos, err := e.cat.ListTables("")
	if err != nil {
		e.opts.Logger.Warn("auto partitioning: list tables", "err", err)
		return
	}
	for _, info := range infos {
		e.runAutoPartitions(ctx, info)
	}
}

// runAutoPartitions checks one table, as CheckAutoPartitions does, when it
// is created or altered. A failure is logged: the create or alter is done,
// and the next check tries again.
func (e *Engine) runAutoPartitions(ctx context.Context, info *catalog.TableInfo) {
	if err := e.checkAutoPartitions(ctx, info); err != nil {
		e.opts.Logger.Warn("auto partitioning failed", "table", info.Path().String(), "err", err)
	}
}

func (e *Engine) autoPartitionLoop() {
	defer e.wg.Done()
	tick := time.NewTicker(e.opts.AutoPartition.CheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-e.life.Done():
			return
		case <-tick.C:
			e.CheckAutoPartitions(e.life)
		}
	}
}

// checkAutoPartitions drops the expired partitions of one table, then
// creates the missing current and next ones, if the table has automatic
// partitioning on. A partition that cannot be created (the partition limit,
// say) is logged and the rest go on, as in Fluss.
func (e *Engine) checkAutoPartitions(ctx context.Context, info *catalog.TableInfo) error {
	s, err := e.tables.Strategy(info)
	if err != nil || s == nil || !s.Enabled {
		return err
	}
	// One check at a time, so that the periodic check and one run by a
	// create or alter never both create or drop the same partition.
	e.autoPartMu.Lock()
	defer e.autoPartMu.Unlock()
	var names []string
	specs := map[string]map[string]string{}
	for _, p := range e.cat.Partitions(info.TableID) {
		names = append(names, p.PartitionName)
		specs[p.PartitionName] = p.Spec
	}
	plan := s.Plan(e.opts.AutoPartition.Now(), names)
	var errList []error
	for _, name := range plan.Drop {
		if err := e.DropPartition(ctx, info.Path().String(), specs[name], true); err != nil {
			errList = append(errList, fmt.Errorf("drop expired partition %s: %w", name, err))
			continue
		}
		e.opts.Logger.Info("auto partitioning dropped an expired partition", "table", info.Path().String(), "partition", name)
	}
	for _, v := range plan.Create {
		if _, _, err := e.tables.CreatePartition(info, map[string]string{s.Key: v}, true); err != nil {
			errList = append(errList, fmt.Errorf("create partition %s: %w", v, err))
			continue
		}
		e.opts.Logger.Info("auto partitioning created a partition", "table", info.Path().String(), "partition", v)
	}
	return errors.Join(errList...)
}
