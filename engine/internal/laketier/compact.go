package laketier

import (
	"context"
	"strconv"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/lake"
)

// Compact compacts o's lake, between its tiering rounds.
func (l *Lakes) Compact(ctx context.Context, o Owner) (lake.CompactStats, error) {
	if err := o.Tier.Round.Lock(ctx); err != nil {
		return lake.CompactStats{}, err
	}
	defer o.Tier.Round.Unlock()
	info, err := l.ownerInfo(o)
	if err != nil {
		return lake.CompactStats{}, err
	}
	o.Tier.Mu.Lock()
	o.Tier.LastCompaction = time.Now()
	o.Tier.Mu.Unlock()
	lt, err := l.Open(ctx, o.Tier, info)
	if err != nil {
		return lake.CompactStats{}, err
	}
	target, _ := strconv.ParseInt(info.Options[catalog.OptCompactionTargetFileSize], 10, 64) // stored in bytes; unset is 0
	st, err := lt.Compact(ctx, lake.CompactOptions{TargetFileSize: target})
	table, log := info.Path().String(), l.env.Logger
	if err != nil {
		log.Warn("lake compaction failed", "table", table, "err", err)
		return st, err
	}
	if st.MaintenanceErr != nil {
		log.Warn("lake maintenance failed", "table", table, "err", st.MaintenanceErr)
	}
	if st.Committed {
		o.Tier.Mu.Lock()
		o.Tier.Snap = st.Snapshot
		o.Tier.Mu.Unlock()
		log.Info("compacted the lake", "table", table, "snapshot", st.Snapshot.ID, "rewritten", st.RewrittenFiles,
			"added", st.AddedFiles, "deletes_removed", st.RemovedDeleteFiles, "orphans_deleted", st.OrphansDeleted)
	}
	return st, nil
}

// compactionDue reports whether o's lake was last compacted (or first
// opened) longer than Env.CompactionInterval ago.
func (l *Lakes) compactionDue(o Owner) bool {
	o.Tier.Mu.Lock()
	defer o.Tier.Mu.Unlock()
	if o.Tier.LastCompaction.IsZero() {
		o.Tier.LastCompaction = time.Now() // not at once after a restart
	}
	return time.Since(o.Tier.LastCompaction) >= l.env.CompactionInterval
}
