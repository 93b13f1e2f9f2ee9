package engine

import (
	"context"

	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// The lake tier is internal/laketier's: the actions here (lake-snapshot,
// tier-now, compact-lake, the served Iceberg catalog) are its, and the
// scheduler runs its rounds.

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
	return e.lakes.LakeSnapshot(ctx, name)
}

// TierNow runs one tiering round of a table at once (the tier-now action)
// and returns the latest lake snapshot after it.
func (e *Engine) TierNow(ctx context.Context, name string) (protocol.LakeSnapshot, error) {
	return e.lakes.TierNow(ctx, name)
}

// CompactLake compacts a table's lake at once (the compact-lake action).
// The scheduler compacts every LakeCompactionInterval per table.
func (e *Engine) CompactLake(ctx context.Context, name string) (protocol.LakeCompaction, error) {
	return e.lakes.CompactNow(ctx, name)
}

// LakeTableNames lists the names of a database's lake-enabled tables, the
// tables of the served Iceberg catalog; it is NOT_FOUND for a database that
// does not exist.
func (e *Engine) LakeTableNames(database string) ([]string, error) {
	return e.lakes.ServedTableNames(database)
}

// LakeTable returns the Iceberg table of a lake-enabled table, opening it if
// this server has not yet, for readers outside fluxgate (the served Iceberg
// catalog). A table that is not lake enabled is NOT_FOUND: its Iceberg table,
// if one is left, is no longer kept up to date.
func (e *Engine) LakeTable(ctx context.Context, name string) (*lake.Table, error) {
	return e.lakes.ServedTable(ctx, name)
}

// tieringLoop runs the tiering scheduler over the lake-enabled tables.
func (e *Engine) tieringLoop() {
	defer e.wg.Done()
	e.lakes.Schedule(e.life, e.opts.TieringInterval)
}
