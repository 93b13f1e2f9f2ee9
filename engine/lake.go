package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/row"
	"github.com/fluxgate-io/fluxgate/tiering"
)

// lakeTier is a table's place in the lake: its Iceberg table, opened on
// first use, and the tiering rounds' bookkeeping.
type lakeTier struct {
	round sync.Mutex // held for a whole round: one at a time per table

	mu        sync.Mutex
	lt        *lake.Table
	ltSchema  int32          // the table schema id lt maps
	snap      *lake.Snapshot // the latest committed snapshot, nil before the first
	known     bool           // snap has been read from the lake
	lastRound time.Time      // start of the last round, finished or not
	caughtUp  time.Time      // start of the last round that succeeded: the lake holds all written before it
}

// opened reports whether the table's lake table has been opened.
func (lt *lakeTier) opened() bool {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.lt != nil
}

// lakeTable returns t's Iceberg table as it maps info's schema, creating it,
// or adding the columns added since, if needed.
func (e *Engine) lakeTable(ctx context.Context, t *table, info *catalog.TableInfo) (*lake.Table, error) {
	t.tier.mu.Lock()
	defer t.tier.mu.Unlock()
	if t.tier.lt != nil && t.tier.ltSchema == info.SchemaID {
		return t.tier.lt, nil
	}
	lt, err := e.lake.Ensure(ctx, info)
	if err != nil {
		return nil, err
	}
	snap, err := lt.Current()
	if err != nil {
		return nil, err
	}
	t.tier.lt, t.tier.ltSchema, t.tier.snap, t.tier.known = lt, info.SchemaID, snap, true
	return lt, nil
}

// lakeSnapshot returns the latest lake snapshot of t, or nil before the
// first commit.
func (e *Engine) lakeSnapshot(ctx context.Context, t *table) (*lake.Snapshot, error) {
	if !t.current().info.DatalakeEnabled() && !t.tier.opened() {
		return nil, nil
	}
	if _, err := e.lakeTable(ctx, t, t.current().info); err != nil {
		return nil, err
	}
	t.tier.mu.Lock()
	defer t.tier.mu.Unlock()
	return t.tier.snap, nil
}

// LakeSnapshot returns the latest lake snapshot of a table (the
// lake-snapshot action): NOT_FOUND before the first commit.
func (e *Engine) LakeSnapshot(ctx context.Context, name string) (*lake.Snapshot, error) {
	t, path, err := e.resolve(name)
	if err != nil {
		return nil, err
	}
	snap, err := e.lakeSnapshot(ctx, t)
	if err != nil {
		return nil, err
	}
	if snap == nil {
		return nil, noLakeSnapshot(t.current().info, path)
	}
	return snap, nil
}

func noLakeSnapshot(info *catalog.TableInfo, path catalog.TablePath) error {
	if !info.DatalakeEnabled() {
		return errs.New(errs.NotFound, "%s has no lake snapshot: the table is not datalake enabled (set %s to true)", path.FullName(), catalog.OptDatalakeEnabled)
	}
	return errs.New(errs.NotFound, "%s has no lake snapshot yet: no tiering round has committed (run tier-now, or wait %s)", path.FullName(), info.Freshness())
}

// TierNow runs one tiering round of a table at once (the tier-now action)
// and returns the latest lake snapshot after it.
func (e *Engine) TierNow(ctx context.Context, name string) (*lake.Snapshot, error) {
	t, path, err := e.resolve(name)
	if err != nil {
		return nil, err
	}
	if path.View != "" {
		return nil, errs.New(errs.Invalid, "tier-now names a table, not the view %s", path.FullName())
	}
	if !t.current().info.DatalakeEnabled() {
		return nil, errs.New(errs.Precondition, "%s is not datalake enabled: set %s to true first", path, catalog.OptDatalakeEnabled)
	}
	res, err := e.tierRound(ctx, t)
	if err != nil {
		return nil, err
	}
	if res.Snapshot == nil {
		return nil, noLakeSnapshot(t.current().info, path)
	}
	return res.Snapshot, nil
}

// tierRound runs one round of t, after any round already running.
func (e *Engine) tierRound(ctx context.Context, t *table) (tiering.Result, error) {
	t.tier.round.Lock()
	defer t.tier.round.Unlock()
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-e.stop
		cancel()
	}()
	tiering.Schedule(ctx, e.opts.TieringInterval, func() []tiering.Tiered {
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

func (s scheduled) Round(ctx context.Context) {
	s.e.tierRound(ctx, s.t) // failures are logged
}

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
		tables = append(tables, t)
	}
	return tables
}

// lakeKeep is what log retention must keep of t for the lake: every offset
// not yet tiered. Nil when t is not tiered.
func (e *Engine) lakeKeep(t *table) func(bucket int) int64 {
	if !t.current().info.DatalakeEnabled() {
		return nil
	}
	snap, err := e.lakeSnapshot(context.Background(), t)
	if err != nil {
		return func(int) int64 { return 0 } // keep everything while the lake cannot say
	}
	return func(b int) int64 {
		if snap == nil {
			return 0
		}
		if o, ok := snap.Offsets[b]; ok {
			return o
		}
		return 0
	}
}

// lakeLag returns how far the lake is behind t's log: in offsets summed
// over buckets, and in seconds since the start of the last round that
// brought it up to date (0 when nothing is behind).
func (e *Engine) lakeLag(t *table) (offsets int64, seconds float64, ok bool) {
	t.tier.mu.Lock()
	snap, known, caughtUp := t.tier.snap, t.tier.known, t.tier.caughtUp
	t.tier.mu.Unlock()
	if !known {
		return 0, 0, false
	}
	for b := range t.log.Buckets() {
		var at int64
		if snap != nil {
			at = max(snap.Offsets[b], 0)
		}
		offsets += max(t.log.HighWatermark(b)-max(at, t.log.EarliestOffset(b)), 0)
	}
	if offsets > 0 {
		since := caughtUp
		if since.IsZero() {
			since = time.UnixMilli(t.current().info.CreatedAt)
		}
		seconds = time.Since(since).Seconds()
	}
	return offsets, seconds, true
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
func (e *Engine) dropLake(info *catalog.TableInfo) {
	if err := e.lake.Drop(context.Background(), info); err != nil {
		e.opts.Logger.Warn("could not drop the lake table of a dropped table", "table", info.Path().String(), "err", err)
	}
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
