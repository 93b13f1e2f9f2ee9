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
	if err := o.tier.round.Lock(ctx); err != nil {
		return lake.CompactStats{}, err
	}
	defer o.tier.round.Unlock()
	info, err := l.ownerInfo(o)
	if err != nil {
		return lake.CompactStats{}, err
	}
	o.tier.compactionStarted(time.Now())
	lt, err := l.open(ctx, o.tier, info)
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
		o.tier.compacted(st.Snapshot)
		log.Info("compacted the lake", "table", table, "snapshot", st.Snapshot.ID, "rewritten", st.RewrittenFiles,
			"added", st.AddedFiles, "deletes_removed", st.RemovedDeleteFiles, "orphans_deleted", st.OrphansDeleted)
	}
	return st, nil
}

// compactionDue reports whether o's lake was last compacted (or first
// opened) longer than Env.CompactionInterval ago.
func (l *Lakes) compactionDue(o Owner) bool {
	return o.tier.compactionDue(l.env.CompactionInterval)
}
