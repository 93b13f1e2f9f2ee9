package laketier

import (
	"context"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// TableLake returns the Iceberg table t is tiered into (a partition's, its
// partitioned table's) as it maps info's schema (of a partition's table, the
// partitioned table's current one).
func (l *Lakes) TableLake(ctx context.Context, t *table.Table, info *catalog.TableInfo) (*lake.Table, error) {
	o := l.OwnerOf(t)
	if o.t == nil {
		var err error
		if info, err = l.ownerInfo(o); err != nil {
			return nil, err
		}
	}
	return l.open(ctx, o.tier, info)
}

// OwnerTable returns o's Iceberg table as it maps info's schema (o's
// definition), creating it, or adding the columns added since, if needed.
func (l *Lakes) OwnerTable(ctx context.Context, o Owner, info *catalog.TableInfo) (*lake.Table, error) {
	return l.open(ctx, o.tier, info)
}

// open returns tr's Iceberg table as it maps info's schema, creating it,
// or adding the columns added since, if needed.
func (l *Lakes) open(ctx context.Context, tr *tier, info *catalog.TableInfo) (*lake.Table, error) {
	if lt := tr.table(info.SchemaID); lt != nil {
		return lt, nil
	}
	if err := tr.opening.Lock(ctx); err != nil {
		return nil, err
	}
	defer tr.opening.Unlock()
	if lt := tr.table(info.SchemaID); lt != nil {
		return lt, nil // opened while this caller waited
	}
	lt, err := l.env.Lake.Ensure(ctx, info)
	if err != nil {
		return nil, err
	}
	snap, err := lt.Current()
	if err != nil {
		return nil, err
	}
	tr.setTable(lt, info.SchemaID, snap)
	return lt, nil
}

// Snapshot returns the latest lake snapshot t is in (a partition's, its
// partitioned table's), or nil before the first commit.
func (l *Lakes) Snapshot(ctx context.Context, t *table.Table) (*lake.Snapshot, error) {
	o := l.OwnerOf(t)
	info, err := l.ownerInfo(o)
	if err != nil {
		return nil, err
	}
	return l.OwnerSnapshot(ctx, o, info)
}

// OwnerSnapshot returns the latest lake snapshot of o, whose definition is
// info, or nil before the first commit.
func (l *Lakes) OwnerSnapshot(ctx context.Context, o Owner, info *catalog.TableInfo) (*lake.Snapshot, error) {
	if !info.DatalakeEnabled() && !o.tier.opened() {
		return nil, nil
	}
	if _, err := l.open(ctx, o.tier, info); err != nil {
		return nil, err
	}
	return o.tier.snapshot(), nil
}

// SnapshotOf is s as the lake-snapshot and tier-now answers give it: a
// partitioned table's offsets by partition name.
func SnapshotOf(s *lake.Snapshot) protocol.LakeSnapshot {
	out := protocol.LakeSnapshot{SnapshotID: s.ID, Offsets: s.Offsets, CommittedAt: s.CommittedAt}
	if s.Partitions != nil {
		out.PartitionOffsets = protocol.PartitionOffsets{}
		for _, p := range s.Partitions {
			out.PartitionOffsets[p.Name] = p.Buckets
		}
	}
	return out
}

// Offsets are the offsets snap holds of the buckets of info's table: of its
// partition, for a partition's table.
func Offsets(snap *lake.Snapshot, info *catalog.TableInfo) map[int]int64 {
	if p := info.Partition(); p != nil {
		return snap.Partitions[p.PartitionID].Buckets
	}
	return snap.Offsets
}

// NoSnapshot is the NOT_FOUND of a table at path without a lake snapshot,
// saying why.
func NoSnapshot(info *catalog.TableInfo, path protocol.TablePath) error {
	if !info.DatalakeEnabled() {
		return errs.New(errs.NotFound, "%s has no lake snapshot: the table is not datalake enabled (set %s to true)", path.FullName(), catalog.OptDatalakeEnabled)
	}
	return errs.New(errs.NotFound, "%s has no lake snapshot yet: no tiering round has committed (run tier-now, or wait %s)", path.FullName(), info.Freshness())
}

// Keep is what log retention must keep of t for the lake: every offset not
// yet tiered. Nil when t is not tiered.
func (l *Lakes) Keep(ctx context.Context, t *table.Table) func(bucket int) int64 {
	if !t.Current().Info.DatalakeEnabled() {
		return nil
	}
	snap, err := l.Snapshot(ctx, t)
	if err != nil {
		return func(int) int64 { return 0 } // keep everything while the lake cannot say
	}
	return func(b int) int64 {
		if snap == nil {
			return 0
		}
		return Offsets(snap, t.Current().Info)[b]
	}
}

// Lag returns how far the lake is behind t's log, in offsets summed over
// buckets, and since when: the start of the last round that brought it up
// to date (the table's creation before any). A partition's is its part of
// its partitioned table's lag, which the caller sums.
func (l *Lakes) Lag(t *table.Table) (offsets int64, since time.Time, ok bool) {
	o := l.OwnerOf(t)
	snap, known, caughtUp := o.tier.lagSince()
	if !known {
		return 0, time.Time{}, false
	}
	info := t.Current().Info
	var tiered map[int]int64
	if snap != nil {
		tiered = Offsets(snap, info)
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

// RoundFailure says why o's rounds fail and since when, nil after a round
// that succeeded.
func (l *Lakes) RoundFailure(o Owner) *protocol.RoundFailure { return o.tier.failure() }

// Ensure refuses a lake-enabled table definition that Iceberg cannot hold,
// and makes its lake table.
func (l *Lakes) Ensure(ctx context.Context, info *catalog.TableInfo) error {
	if !info.DatalakeEnabled() {
		return nil
	}
	if err := lake.Check(info); err != nil {
		return err
	}
	_, err := l.env.Lake.Ensure(ctx, info)
	return err
}

// Drop forgets a dropped table's tier and removes its lake table, if it is
// lake-enabled or (a table without partitions) its lake table was opened;
// the table is gone either way, so a failure is only logged. A partition
// has no lake table of its own.
func (l *Lakes) Drop(ctx context.Context, info *catalog.TableInfo) {
	if info.Partition() != nil {
		return
	}
	tr := l.tiers.existing(info.TableID)
	l.tiers.forget(info.TableID)
	opened := tr != nil && !info.IsPartitioned() && tr.opened()
	if !info.DatalakeEnabled() && !opened {
		return
	}
	if err := l.env.Lake.Drop(ctx, info); err != nil {
		l.env.Logger.Warn("could not drop the lake table of a dropped table", "table", info.Path().String(), "err", err)
	}
}
