package engine

import (
	"context"
	"errors"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
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
	t, path, err := e.resolve(name)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	if path.View != "" {
		return protocol.LakeSnapshot{}, errs.New(errs.Invalid, "tier-now names a table, not the view %s", path.FullName())
	}
	if !t.current().info.DatalakeEnabled() {
		return protocol.LakeSnapshot{}, errs.New(errs.Precondition, "%s is not datalake enabled: set %s to true first", path, catalog.OptDatalakeEnabled)
	}
	res, err := e.tierRound(ctx, t)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	if res.Snapshot == nil {
		return protocol.LakeSnapshot{}, noLakeSnapshot(t.current().info, path)
	}
	return lakeSnapshotOf(res.Snapshot), nil
}

// tierRound runs one round of t, after any round already running.
func (e *Engine) tierRound(ctx context.Context, t *table) (tiering.Result, error) {
	if err := t.tier.round.lock(ctx); err != nil {
		return tiering.Result{}, err
	}
	defer t.tier.round.unlock()
	sch := t.current()
	info := sch.info
	if t.dropped.Load() {
		return tiering.Result{}, errs.New(errs.NotFound, "table %s was dropped", info.Path())
	}
	start := time.Now()
	t.tier.mu.Lock()
	t.tier.lastRound = start
	t.tier.mu.Unlock()
	lt, err := e.lakeTable(ctx, t, info)
	if err != nil {
		return tiering.Result{}, err
	}
	res, err := tiering.Round(ctx, lt, &tierSource{e: e, t: t, sch: sch}, e.opts.Allocator)
	attr := tableAttr(info.Path().String())
	e.met.lakeRoundSeconds.Record(ctx, time.Since(start).Seconds(), attr)
	if err != nil {
		e.opts.Logger.Warn("tiering round failed", "table", info.Path().String(), "err", err)
		return res, err
	}
	t.tier.mu.Lock()
	t.tier.snap, t.tier.caughtUp = res.Snapshot, start
	t.tier.mu.Unlock()
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

// tieringLoop runs the tiering scheduler over the lake-enabled tables.
func (e *Engine) tieringLoop() {
	defer e.wg.Done()
	tiering.Schedule(e.life, e.opts.TieringInterval, func() []tiering.Tiered {
		var due []tiering.Tiered
		for _, t := range e.openTables() {
			if t.current().info.DatalakeEnabled() && !t.dropped.Load() {
				due = append(due, scheduled{e, t})
			}
		}
		return due
	})
}

// scheduled is a lake-enabled table as the scheduler sees it.
type scheduled struct {
	e *Engine
	t *table
}

func (s scheduled) Freshness() time.Duration { return s.t.current().info.Freshness() }

func (s scheduled) LastRound() time.Time {
	s.t.tier.mu.Lock()
	defer s.t.tier.mu.Unlock()
	return s.t.tier.lastRound
}

func (s scheduled) Round(ctx context.Context)   { s.e.tierRound(ctx, s.t) } // failures are logged
func (s scheduled) CompactionDue() bool         { return s.e.compactionDue(s.t) }
func (s scheduled) Compact(ctx context.Context) { s.e.compactLake(ctx, s.t) } // failures are logged

// Idle opens the lake table early, so that its lag is known before its first
// round; a failure shows in the round.
func (s scheduled) Idle(ctx context.Context) {
	if !s.t.tier.opened() {
		s.e.lakeTable(ctx, s.t, s.t.current().info)
	}
}

func (e *Engine) openTables() []*table {
	e.mu.RLock()
	defer e.mu.RUnlock()
	tables := make([]*table, 0, len(e.tables))
	for _, t := range e.tables {
		if t.current().info.Partition() != nil {
			continue // partitions are not tiered yet
		}
		tables = append(tables, t)
	}
	return tables
}

// tierSource is a table as a tiering round reads it, in one schema.
type tierSource struct {
	e   *Engine
	t   *table
	sch *tableSchema
}

func (s *tierSource) Buckets() int { return s.t.log.Buckets() }

func (s *tierSource) Retained(b int) (int64, int64) {
	return s.t.log.EarliestOffset(b), s.t.log.HighWatermark(b)
}

func (s *tierSource) PrimaryKey() []int { return s.sch.info.PrimaryKeyIndexes() }

func (s *tierSource) Read(ctx context.Context, bucket int, from, to int64, fn func(tiering.Batch) error) error {
	info := s.sch.info
	reader, err := s.t.log.NewReader(bucket, from, indexes(len(s.sch.types)))
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
		rec, err := f.Record(s.sch.decoder, info.ArrowSchema())
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
	info := s.sch.info
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
		if err := row.DecodeTo(value, s.sch.types, b.Fields()); err != nil {
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
