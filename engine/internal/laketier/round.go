package laketier

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/tiering"
)

// Round runs one tiering round of o, after any round already running.
func (l *Lakes) Round(ctx context.Context, o Owner) (tiering.Result, error) {
	if err := o.tier.round.Lock(ctx); err != nil {
		return tiering.Result{}, err
	}
	defer o.tier.round.Unlock()
	info, err := l.ownerInfo(o)
	if err != nil {
		return tiering.Result{}, err
	}
	start := time.Now()
	o.tier.roundStarted(start)
	lt, err := l.open(ctx, o.tier, info)
	if err != nil {
		return tiering.Result{}, err
	}
	var res tiering.Result
	if o.t != nil {
		res, err = tiering.Round(ctx, lt, &source{kv: l.env.KV, alloc: l.env.Alloc, t: o.t, sch: o.t.Current()}, l.env.Alloc)
	} else {
		var parts []tiering.Partition
		if parts, err = l.partitions(info); err == nil {
			res, err = tiering.RoundPartitions(ctx, lt, parts, l.env.Alloc)
		}
	}
	log, met := l.env.Logger, l.env.Metrics
	attr := met.Table(info.Path().String())
	met.RoundSeconds.Record(ctx, time.Since(start).Seconds(), attr)
	if err != nil {
		err = fmt.Errorf("tiering %s: %w", info.Path(), err)
		log.Warn("tiering round failed", "table", info.Path().String(), "err", err)
		if ctx.Err() == nil { // a round cut short by its caller did not fail
			met.RoundFailures.Add(ctx, 1, attr)
			o.tier.roundFailed(start, err)
		}
		return res, err
	}
	o.tier.roundSucceeded(start, res.Snapshot)
	if res.Stats.ExpireErr != nil {
		log.Warn("could not expire old lake snapshots", "table", info.Path().String(), "err", res.Stats.ExpireErr)
	}
	if res.Skipped > 0 {
		log.Warn("tiering skipped offsets that retention removed while the lake was disabled", "table", info.Path().String(), "offsets", res.Skipped)
	}
	if res.Committed {
		met.Files.Add(ctx, res.Stats.Files, attr)
		met.Bytes.Add(ctx, res.Stats.Bytes, attr)
		met.Rows.Add(ctx, res.Rows, attr)
		log.Info("tiered", "table", info.Path().String(), "snapshot", res.Snapshot.ID,
			"rows", res.Rows, "files", res.Stats.Files, "bytes", res.Stats.Bytes, "duration", res.Duration)
	}
	return res, nil
}

// partitions lists a partitioned table's partitions, in name order, as a
// round reads them. A partition whose data is unavailable (DATA_LOSS) is
// listed without a source, so that the round tiers the others and keeps its
// offsets. One listed and not open is left out: either being created, with
// no rows yet, or being dropped, already gone from the catalog. Table, not
// Partition: a round does not wait for partition DDL (tables.Set's
// partMu).
func (l *Lakes) partitions(info *catalog.TableInfo) ([]tiering.Partition, error) {
	var parts []tiering.Partition
	for _, p := range l.env.Tables.Catalog().Partitions(info.TableID) {
		t, err := l.env.Tables.Table(info.ForPartition(p))
		switch {
		case errs.Is(err, errs.DataLoss):
			l.env.Logger.Warn("tiering leaves out an unavailable partition; its lake offsets stay until it is repaired",
				"table", info.Path().String(), "partition", p.PartitionName, "err", err)
			parts = append(parts, tiering.Partition{ID: p.PartitionID, Name: p.PartitionName})
			continue
		case errs.Is(err, errs.NotFound):
			continue // not open yet, being created, or no longer, being dropped
		case err != nil:
			return nil, fmt.Errorf("partition %s: %w", p.PartitionName, err)
		}
		sch := t.Current()
		if sch.Info.SchemaID != info.SchemaID {
			// An alter-table reaching the partitions: the next round
			// reads them all in the new schema.
			return nil, fmt.Errorf("partition %s is at schema %d, the table at %d", p.PartitionName, sch.Info.SchemaID, info.SchemaID)
		}
		parts = append(parts, tiering.Partition{ID: p.PartitionID, Name: p.PartitionName,
			Source: &source{kv: l.env.KV, alloc: l.env.Alloc, t: t, sch: sch}})
	}
	return parts, nil
}
