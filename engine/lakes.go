package engine

import (
	"context"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/tiering"
)

// The lake tier is internal/laketier's: the actions here (lake-snapshot,
// tier-now, compact-lake, the served Iceberg catalog) resolve their table's
// lake owner there and run there; the scheduler runs its rounds.

// newLakes builds the engine's lake tier (internal/laketier) over its lake,
// state, catalog and open tables.
func (e *Engine) newLakes() *laketier.Lakes {
	return laketier.New(laketier.Env{
		Lake: e.lake, KV: e.kv, Alloc: e.opts.Allocator, Logger: e.opts.Logger,
		Metrics: laketier.Metrics{RoundSeconds: e.met.lakeRoundSeconds, Files: e.met.lakeFiles,
			Bytes: e.met.lakeBytes, Rows: e.met.lakeRows, RoundFailures: e.met.lakeRoundFailures, Table: tableAttr},
		CompactionInterval: e.opts.LakeCompactionInterval,
		Tables:             e.tables,
	})
}

// LakeSnapshot returns the latest lake snapshot of a table (the
// lake-snapshot action): NOT_FOUND before the first commit.
func (e *Engine) LakeSnapshot(ctx context.Context, name string) (protocol.LakeSnapshot, error) {
	o, info, path, err := e.lakes.Resolve(name)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	snap, err := e.lakes.OwnerSnapshot(ctx, o, info)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	failure := e.lakes.RoundFailure(o)
	if snap == nil {
		if failure != nil {
			return protocol.LakeSnapshot{}, errs.New(errs.NotFound, "%s has no lake snapshot yet: its tiering rounds fail since %s: %s",
				path.FullName(), time.UnixMilli(failure.Since).UTC().Format(time.RFC3339), failure.Message)
		}
		return protocol.LakeSnapshot{}, laketier.NoSnapshot(info, path)
	}
	out := laketier.SnapshotOf(snap)
	out.RoundFailure = failure
	return out, nil
}

// LakeTableNames lists the names of a database's lake-enabled tables, the
// tables of the served Iceberg catalog; it is NOT_FOUND for a database that
// does not exist.
func (e *Engine) LakeTableNames(database string) ([]string, error) {
	infos, err := e.cat.ListTables(database)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, info := range infos {
		if info.DatalakeEnabled() {
			names = append(names, info.Path().Table)
		}
	}
	return names, nil
}

// LakeTable returns the Iceberg table of a lake-enabled table, opening it if
// this server has not yet, for readers outside fluxgate (the served Iceberg
// catalog). A table that is not lake enabled is NOT_FOUND: its Iceberg table,
// if one is left, is no longer kept up to date.
func (e *Engine) LakeTable(ctx context.Context, name string) (*lake.Table, error) {
	o, info, path, err := e.lakes.Resolve(name)
	if err != nil {
		return nil, err
	}
	if path.View != "" {
		return nil, errs.New(errs.NotFound, "%s is a view, not a lake table", path.FullName())
	}
	if !info.DatalakeEnabled() {
		return nil, errs.New(errs.NotFound, "%s is not datalake enabled (%s is not true)", path, catalog.OptDatalakeEnabled)
	}
	return e.lakes.OwnerTable(ctx, o, info)
}

// Lake compaction: the compact-lake action and the compactions the tiering
// scheduler runs every LakeCompactionInterval per table.

// CompactLake compacts a table's lake at once (the compact-lake action).
func (e *Engine) CompactLake(ctx context.Context, name string) (protocol.LakeCompaction, error) {
	o, info, path, err := e.lakes.Resolve(name)
	if err != nil {
		return protocol.LakeCompaction{}, err
	}
	if path.View != "" {
		return protocol.LakeCompaction{}, errs.New(errs.Invalid, "compact-lake names a table, not the view %s", path.FullName())
	}
	if !info.DatalakeEnabled() {
		return protocol.LakeCompaction{}, errs.New(errs.Precondition, "%s is not datalake enabled: set %s to true first", path, catalog.OptDatalakeEnabled)
	}
	st, err := e.lakes.Compact(ctx, o)
	if err == nil && st.Snapshot == nil {
		err = laketier.NoSnapshot(info, path)
	}
	if err != nil {
		return protocol.LakeCompaction{}, err
	}
	return protocol.LakeCompaction{LakeSnapshot: laketier.SnapshotOf(st.Snapshot), RewrittenFiles: st.RewrittenFiles, AddedFiles: st.AddedFiles,
		RemovedDeleteFiles: st.RemovedDeleteFiles, OrphansDeleted: st.OrphansDeleted}, nil
}

// Tiering: tier-now and the scheduler over the lake-enabled tables; the
// rounds are internal/laketier's.

// TierNow runs one tiering round of a table at once (the tier-now action)
// and returns the latest lake snapshot after it.
func (e *Engine) TierNow(ctx context.Context, name string) (protocol.LakeSnapshot, error) {
	o, info, path, err := e.lakes.Resolve(name)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	if path.View != "" {
		return protocol.LakeSnapshot{}, errs.New(errs.Invalid, "tier-now names a table, not the view %s", path.FullName())
	}
	if !info.DatalakeEnabled() {
		return protocol.LakeSnapshot{}, errs.New(errs.Precondition, "%s is not datalake enabled: set %s to true first", path, catalog.OptDatalakeEnabled)
	}
	res, err := e.lakes.Round(ctx, o)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	if res.Snapshot == nil {
		return protocol.LakeSnapshot{}, laketier.NoSnapshot(info, path)
	}
	return laketier.SnapshotOf(res.Snapshot), nil
}

// tieringLoop runs the tiering scheduler over the lake-enabled tables.
func (e *Engine) tieringLoop() {
	defer e.wg.Done()
	tiering.Schedule(e.life, e.opts.TieringInterval, func() []tiering.Tiered {
		var due []tiering.Tiered
		for _, o := range e.lakes.Owners() {
			due = append(due, e.lakes.Scheduled(o))
		}
		return due
	})
}
