package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
	"github.com/fluxgate-io/fluxgate/tiering"
)

// Tiering: tier-now, the rounds the scheduler runs, and the table as a
// round reads it.

// TierNow runs one tiering round of a table at once (the tier-now action)
// and returns the latest lake snapshot after it.
func (e *Engine) TierNow(ctx context.Context, name string) (protocol.LakeSnapshot, error) {
	o, info, path, err := e.resolveLake(name)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	if path.View != "" {
		return protocol.LakeSnapshot{}, errs.New(errs.Invalid, "tier-now names a table, not the view %s", path.FullName())
	}
	if !info.DatalakeEnabled() {
		return protocol.LakeSnapshot{}, errs.New(errs.Precondition, "%s is not datalake enabled: set %s to true first", path, catalog.OptDatalakeEnabled)
	}
	res, err := e.tierRound(ctx, o)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	if res.Snapshot == nil {
		return protocol.LakeSnapshot{}, noLakeSnapshot(info, path)
	}
	return lakeSnapshotOf(res.Snapshot), nil
}

// tierRound runs one round of o, after any round already running.
func (e *Engine) tierRound(ctx context.Context, o lakeOwner) (tiering.Result, error) {
	if err := o.tier.Round.Lock(ctx); err != nil {
		return tiering.Result{}, err
	}
	defer o.tier.Round.Unlock()
	info, err := e.ownerInfo(o)
	if err != nil {
		return tiering.Result{}, err
	}
	start := time.Now()
	o.tier.Mu.Lock()
	o.tier.LastRound = start
	o.tier.Mu.Unlock()
	lt, err := e.openLake(ctx, o.tier, info)
	if err != nil {
		return tiering.Result{}, err
	}
	var res tiering.Result
	if o.t != nil {
		res, err = tiering.Round(ctx, lt, &tierSource{e: e, t: o.t, sch: o.t.Current()}, e.opts.Allocator)
	} else {
		var parts []tiering.Partition
		if parts, err = e.tierPartitions(info); err == nil {
			res, err = tiering.RoundPartitions(ctx, lt, parts, e.opts.Allocator)
		}
	}
	attr := tableAttr(info.Path().String())
	e.met.lakeRoundSeconds.Record(ctx, time.Since(start).Seconds(), attr)
	if err != nil {
		e.opts.Logger.Warn("tiering round failed", "table", info.Path().String(), "err", err)
		return res, err
	}
	o.tier.Mu.Lock()
	o.tier.Snap, o.tier.CaughtUp = res.Snapshot, start
	o.tier.Mu.Unlock()
	if res.Stats.ExpireErr != nil {
		e.opts.Logger.Warn("could not expire old lake snapshots", "table", info.Path().String(), "err", res.Stats.ExpireErr)
	}
	if res.Skipped > 0 {
		e.opts.Logger.Warn("tiering skipped offsets that retention removed while the lake was disabled", "table", info.Path().String(), "offsets", res.Skipped)
	}
	if res.Committed {
		e.met.lakeFiles.Add(ctx, res.Stats.Files, attr)
		e.met.lakeBytes.Add(ctx, res.Stats.Bytes, attr)
		e.met.lakeRows.Add(ctx, res.Rows, attr)
		e.opts.Logger.Info("tiered", "table", info.Path().String(), "snapshot", res.Snapshot.ID,
			"rows", res.Rows, "files", res.Stats.Files, "bytes", res.Stats.Bytes, "duration", res.Duration)
	}
	return res, nil
}

// tierPartitions lists a partitioned table's partitions, in name order, as
// a round reads them. A partition whose data is unavailable (DATA_LOSS) is
// listed without a source, so that the round tiers the others and keeps its
// offsets. One listed and not open is left out: either being created, with
// no rows yet, or being dropped, already gone from the catalog. Not
// openPartition: a round does not wait for partition DDL (partMu).
func (e *Engine) tierPartitions(info *catalog.TableInfo) ([]tiering.Partition, error) {
	var parts []tiering.Partition
	for _, p := range e.cat.Partitions(info.TableID) {
		t, err := e.table(info.ForPartition(p))
		switch {
		case errs.Is(err, errs.DataLoss):
			e.opts.Logger.Warn("tiering leaves out an unavailable partition; its lake offsets stay until it is repaired",
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
		parts = append(parts, tiering.Partition{ID: p.PartitionID, Name: p.PartitionName, Source: &tierSource{e: e, t: t, sch: sch}})
	}
	return parts, nil
}

// tieringLoop runs the tiering scheduler over the lake-enabled tables.
func (e *Engine) tieringLoop() {
	defer e.wg.Done()
	tiering.Schedule(e.life, e.opts.TieringInterval, func() []tiering.Tiered {
		var due []tiering.Tiered
		for _, o := range e.lakeOwners() {
			due = append(due, scheduled{e, o})
		}
		return due
	})
}

// scheduled is a lake-enabled table as the scheduler sees it.
type scheduled struct {
	e *Engine
	o lakeOwner
}

func (s scheduled) Freshness() time.Duration {
	info, err := s.e.ownerInfo(s.o)
	if err != nil {
		return time.Duration(math.MaxInt64) // dropped: never due
	}
	return info.Freshness()
}

func (s scheduled) LastRound() time.Time {
	s.o.tier.Mu.Lock()
	defer s.o.tier.Mu.Unlock()
	return s.o.tier.LastRound
}

func (s scheduled) Round(ctx context.Context)   { s.e.tierRound(ctx, s.o) } // failures are logged
func (s scheduled) CompactionDue() bool         { return s.e.compactionDue(s.o) }
func (s scheduled) Compact(ctx context.Context) { s.e.compactLake(ctx, s.o) } // failures are logged

// Idle opens the lake table early, so that its lag is known before its first
// round; a failure shows in the round.
func (s scheduled) Idle(ctx context.Context) {
	if info, err := s.e.ownerInfo(s.o); err == nil && !s.o.tier.Opened() {
		s.e.openLake(ctx, s.o.tier, info)
	}
}

func (e *Engine) openTables() []*table.Table {
	e.mu.RLock()
	defer e.mu.RUnlock()
	tables := make([]*table.Table, 0, len(e.tables))
	for _, t := range e.tables {
		tables = append(tables, t)
	}
	return tables
}

// tierSource is a table as a tiering round reads it, in one schema.
type tierSource struct {
	e   *Engine
	t   *table.Table
	sch *table.Schema
}

func (s *tierSource) Buckets() int { return s.t.Log.Buckets() }

func (s *tierSource) Retained(b int) (int64, int64) {
	return s.t.Log.EarliestOffset(b), s.t.Log.HighWatermark(b)
}

func (s *tierSource) PrimaryKey() []int { return s.sch.Info.PrimaryKeyIndexes() }

func (s *tierSource) Read(ctx context.Context, bucket int, from, to int64, fn func(tiering.Batch) error) error {
	info := s.sch.Info
	reader, err := s.t.Log.NewReader(bucket, from, table.Indexes(len(s.sch.Types)))
	if err != nil {
		return err
	}
	defer reader.Close()
	for reader.Offset() < to {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := reader.Next(to)
		if err != nil {
			return err
		}
		if f == nil {
			return errors.New("the log ended before the high watermark")
		}
		if f.Rows == 0 {
			continue
		}
		rec, err := f.Record(s.sch.Decoder, info.ArrowSchema())
		if err != nil {
			return err
		}
		err = fn(tiering.Batch{Rec: rec, Offset: f.BaseOffset, CommitMs: f.CommitTs, ChangeTypes: f.ChangeTypes})
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// tierSnapshotRows is how many rows of a state snapshot go in one batch.
const tierSnapshotRows = 8192

func (s *tierSource) Snapshot(ctx context.Context, bucket int, fn func(tiering.Batch) error) (int64, error) {
	info := s.sch.Info
	snap := s.e.kv.Snapshot()
	defer snap.Close()
	at, err := snap.Applied(info.TableID, bucket)
	if err != nil {
		return 0, err
	}
	b := array.NewRecordBuilder(s.e.opts.Allocator, info.ArrowSchema())
	defer b.Release()
	flush := func() error {
		rec := b.NewRecordBatch()
		defer rec.Release()
		return fn(tiering.Batch{Rec: rec, Offset: -1, CommitMs: -1})
	}
	rows := 0
	err = snap.Rows(info.TableID, bucket, func(_, value []byte) error {
		if err := row.DecodeTo(value, s.sch.Types, b.Fields()); err != nil {
			return err
		}
		if rows++; rows%tierSnapshotRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			return flush()
		}
		return nil
	})
	if err == nil && rows%tierSnapshotRows != 0 {
		err = flush()
	}
	return at, err
}
