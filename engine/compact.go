package engine

import (
	"context"
	"strconv"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Lake compaction: the compact-lake action and the compactions the tiering
// scheduler runs every LakeCompactionInterval per table.

// CompactLake compacts a table's lake at once (the compact-lake action).
func (e *Engine) CompactLake(ctx context.Context, name string) (protocol.LakeCompaction, error) {
	o, info, path, err := e.resolveLake(name)
	if err != nil {
		return protocol.LakeCompaction{}, err
	}
	if path.View != "" {
		return protocol.LakeCompaction{}, errs.New(errs.Invalid, "compact-lake names a table, not the view %s", path.FullName())
	}
	if !info.DatalakeEnabled() {
		return protocol.LakeCompaction{}, errs.New(errs.Precondition, "%s is not datalake enabled: set %s to true first", path, catalog.OptDatalakeEnabled)
	}
	st, err := e.compactLake(ctx, o)
	if err == nil && st.Snapshot == nil {
		err = noLakeSnapshot(info, path)
	}
	if err != nil {
		return protocol.LakeCompaction{}, err
	}
	return protocol.LakeCompaction{LakeSnapshot: lakeSnapshotOf(st.Snapshot), RewrittenFiles: st.RewrittenFiles, AddedFiles: st.AddedFiles,
		RemovedDeleteFiles: st.RemovedDeleteFiles, OrphansDeleted: st.OrphansDeleted}, nil
}

// compactLake compacts o's lake, between its tiering rounds.
func (e *Engine) compactLake(ctx context.Context, o lakeOwner) (lake.CompactStats, error) {
	if err := o.tier.Round.Lock(ctx); err != nil {
		return lake.CompactStats{}, err
	}
	defer o.tier.Round.Unlock()
	info, err := e.ownerInfo(o)
	if err != nil {
		return lake.CompactStats{}, err
	}
	o.tier.Mu.Lock()
	o.tier.LastCompaction = time.Now()
	o.tier.Mu.Unlock()
	lt, err := e.openLake(ctx, o.tier, info)
	if err != nil {
		return lake.CompactStats{}, err
	}
	target, _ := strconv.ParseInt(info.Options[catalog.OptCompactionTargetFileSize], 10, 64) // stored in bytes; unset is 0
	st, err := lt.Compact(ctx, lake.CompactOptions{TargetFileSize: target})
	table := info.Path().String()
	if err != nil {
		e.opts.Logger.Warn("lake compaction failed", "table", table, "err", err)
		return st, err
	}
	if st.MaintenanceErr != nil {
		e.opts.Logger.Warn("lake maintenance failed", "table", table, "err", st.MaintenanceErr)
	}
	if st.Committed {
		o.tier.Mu.Lock()
		o.tier.Snap = st.Snapshot
		o.tier.Mu.Unlock()
		e.opts.Logger.Info("compacted the lake", "table", table, "snapshot", st.Snapshot.ID, "rewritten", st.RewrittenFiles,
			"added", st.AddedFiles, "deletes_removed", st.RemovedDeleteFiles, "orphans_deleted", st.OrphansDeleted)
	}
	return st, nil
}

// compactionDue reports whether o's lake was last compacted (or first
// opened) longer than LakeCompactionInterval ago.
func (e *Engine) compactionDue(o lakeOwner) bool {
	o.tier.Mu.Lock()
	defer o.tier.Mu.Unlock()
	if o.tier.LastCompaction.IsZero() {
		o.tier.LastCompaction = time.Now() // not at once after a restart
	}
	return time.Since(o.tier.LastCompaction) >= e.opts.LakeCompactionInterval
}
