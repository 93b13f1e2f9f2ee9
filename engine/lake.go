package engine

import (
	"context"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// lakeTable returns the Iceberg table t is tiered into (a partition's, its
// partitioned table's) as it maps info's schema (of a partition's table, the
// partitioned table's current one).
func (e *Engine) lakeTable(ctx context.Context, t *table.Table, info *catalog.TableInfo) (*lake.Table, error) {
	o := e.ownerOf(t)
	if o.t == nil {
		var err error
		if info, err = e.ownerInfo(o); err != nil {
			return nil, err
		}
	}
	return e.openLake(ctx, o.tier, info)
}

// openLake returns tier's Iceberg table as it maps info's schema, creating
// it, or adding the columns added since, if needed.
func (e *Engine) openLake(ctx context.Context, tier *table.Tier, info *catalog.TableInfo) (*lake.Table, error) {
	if lt := tier.Table(info.SchemaID); lt != nil {
		return lt, nil
	}
	if err := tier.Opening.Lock(ctx); err != nil {
		return nil, err
	}
	defer tier.Opening.Unlock()
	if lt := tier.Table(info.SchemaID); lt != nil {
		return lt, nil // opened while this caller waited
	}
	lt, err := e.lake.Ensure(ctx, info)
	if err != nil {
		return nil, err
	}
	snap, err := lt.Current()
	if err != nil {
		return nil, err
	}
	tier.Mu.Lock()
	defer tier.Mu.Unlock()
	if tier.Lake == nil {
		// Only the first opening reads the snapshot: later ones (for a new
		// schema) may race a round's commit, and rounds keep it current.
		tier.Snap = snap
	}
	tier.Lake, tier.LakeSchema = lt, info.SchemaID
	return lt, nil
}

// lakeSnapshot returns the latest lake snapshot t is in (a partition's,
// its partitioned table's), or nil before the first commit.
func (e *Engine) lakeSnapshot(ctx context.Context, t *table.Table) (*lake.Snapshot, error) {
	o := e.ownerOf(t)
	info, err := e.ownerInfo(o)
	if err != nil {
		return nil, err
	}
	return e.ownerSnapshot(ctx, o, info)
}

// ownerSnapshot returns the latest lake snapshot of o, whose definition is
// info, or nil before the first commit.
func (e *Engine) ownerSnapshot(ctx context.Context, o lakeOwner, info *catalog.TableInfo) (*lake.Snapshot, error) {
	if !info.DatalakeEnabled() && !o.tier.Opened() {
		return nil, nil
	}
	if _, err := e.openLake(ctx, o.tier, info); err != nil {
		return nil, err
	}
	o.tier.Mu.Lock()
	defer o.tier.Mu.Unlock()
	return o.tier.Snap, nil
}

// LakeSnapshot returns the latest lake snapshot of a table (the
// lake-snapshot action): NOT_FOUND before the first commit.
func (e *Engine) LakeSnapshot(ctx context.Context, name string) (protocol.LakeSnapshot, error) {
	o, info, path, err := e.resolveLake(name)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	snap, err := e.ownerSnapshot(ctx, o, info)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	if snap == nil {
		return protocol.LakeSnapshot{}, noLakeSnapshot(info, path)
	}
	return lakeSnapshotOf(snap), nil
}

// lakeSnapshotOf is s as the lake-snapshot and tier-now answers give it: a
// partitioned table's offsets by partition name.
func lakeSnapshotOf(s *lake.Snapshot) protocol.LakeSnapshot {
	out := protocol.LakeSnapshot{SnapshotID: s.ID, Offsets: s.Offsets, CommittedAt: s.CommittedAt}
	if s.Partitions != nil {
		out.PartitionOffsets = protocol.PartitionOffsets{}
		for _, p := range s.Partitions {
			out.PartitionOffsets[p.Name] = p.Buckets
		}
	}
	return out
}

// lakeOffsets are the offsets snap holds of the buckets of info's table:
// of its partition, for a partition's table.
func lakeOffsets(snap *lake.Snapshot, info *catalog.TableInfo) map[int]int64 {
	if p := info.Partition(); p != nil {
		return snap.Partitions[p.PartitionID].Buckets
	}
	return snap.Offsets
}

func noLakeSnapshot(info *catalog.TableInfo, path protocol.TablePath) error {
	if !info.DatalakeEnabled() {
		return errs.New(errs.NotFound, "%s has no lake snapshot: the table is not datalake enabled (set %s to true)", path.FullName(), catalog.OptDatalakeEnabled)
	}
	return errs.New(errs.NotFound, "%s has no lake snapshot yet: no tiering round has committed (run tier-now, or wait %s)", path.FullName(), info.Freshness())
}

// lakeKeep is what log retention must keep of t for the lake: every offset
// not yet tiered. Nil when t is not tiered.
func (e *Engine) lakeKeep(ctx context.Context, t *table.Table) func(bucket int) int64 {
	if !t.Current().Info.DatalakeEnabled() {
		return nil
	}
	snap, err := e.lakeSnapshot(ctx, t)
	if err != nil {
		return func(int) int64 { return 0 } // keep everything while the lake cannot say
	}
	return func(b int) int64 {
		if snap == nil {
			return 0
		}
		return lakeOffsets(snap, t.Current().Info)[b]
	}
}

// lakeLag returns how far the lake is behind t's log, in offsets summed
// over buckets, and since when: the start of the last round that brought it
// up to date (the table's creation before any). A partition's is its part
// of its partitioned table's lag, which the caller sums.
func (e *Engine) lakeLag(t *table.Table) (offsets int64, since time.Time, ok bool) {
	o := e.ownerOf(t)
	o.tier.Mu.Lock()
	snap, known, caughtUp := o.tier.Snap, o.tier.Lake != nil, o.tier.CaughtUp
	o.tier.Mu.Unlock()
	if !known {
		return 0, time.Time{}, false
	}
	info := t.Current().Info
	var tiered map[int]int64
	if snap != nil {
		tiered = lakeOffsets(snap, info)
	}
	for b := range t.Log.Buckets() {
		at := max(tiered[b], 0)
		offsets += max(t.Log.HighWatermark(b)-max(at, t.Log.EarliestOffset(b)), 0)
	}
	since = caughtUp
	if since.IsZero() {
		since = time.UnixMilli(info.CreatedAt)
	}
	return offsets, since, true
}

// ensureLake refuses a lake-enabled table definition that Iceberg cannot
// hold, and makes its lake table.
func (e *Engine) ensureLake(ctx context.Context, info *catalog.TableInfo) error {
	if !info.DatalakeEnabled() {
		return nil
	}
	if err := lake.Check(info); err != nil {
		return err
	}
	_, err := e.lake.Ensure(ctx, info)
	return err
}

// dropLake removes a dropped table's lake table; the table is gone either
// way, so a failure is only logged.
func (e *Engine) dropLake(ctx context.Context, info *catalog.TableInfo) {
	e.lakeParts.forget(info.TableID)
	if err := e.lake.Drop(ctx, info); err != nil {
		e.opts.Logger.Warn("could not drop the lake table of a dropped table", "table", info.Path().String(), "err", err)
	}
}
