package scanplan

import (
	"context"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// One planner per view: each checks the startup and stop its view allows and
// fixes a bucket's range of offsets.

// viewPlanner is a view's planning of one scan.
type viewPlanner struct {
	view           string // the ticket's view: a log read of a lake-enabled table may become a union
	snapshotFirst  bool   // the changelog starts with the current rows
	lakeSnapshotID *int64
	bucketRange    func(bucket int) (protocol.TicketRange, error)
}

// planner returns the planner of a scan of view.
func (env *Env) planner(ctx context.Context, t *table.Table, path protocol.TablePath, view string, startup protocol.Position, stop protocol.Position) (viewPlanner, error) {
	switch view {
	case protocol.ViewSnapshot:
		return planState(t, path, startup, stop)
	case protocol.ViewChangelog:
		return planChangelog(t, startup, stop), nil
	case protocol.ViewLake:
		return env.planLake(ctx, t, path, startup, stop)
	}
	info := t.Current().Info
	if startup.Mode == protocol.PositionFull && info.DatalakeEnabled() {
		// A lake-enabled log table read whole: the lake snapshot first,
		// then the log from its offsets (PROTOCOL.md §7.3).
		snap, err := env.Lakes.Snapshot(ctx, t)
		if err != nil {
			return viewPlanner{}, err
		}
		if snap != nil {
			return env.planUnion(t, snap, startup, stop), nil
		}
	}
	return planLog(t, startup, stop), nil
}

// planLog reads the log from the startup's offsets to the stop's.
func planLog(t *table.Table, startup protocol.Position, stop protocol.Position) viewPlanner {
	return viewPlanner{view: protocol.ViewLog, bucketRange: func(b int) (protocol.TicketRange, error) {
		start, err := StartOffset(t, b, startup)
		if err != nil {
			return protocol.TicketRange{}, err
		}
		end, err := stopOffset(t, b, start, stop)
		return protocol.TicketRange{Bucket: b, Start: start, Stop: end}, err
	}}
}

// planState reads a primary-key table's current rows: whole, and bounded.
func planState(t *table.Table, path protocol.TablePath, startup protocol.Position, stop protocol.Position) (viewPlanner, error) {
	if startup.Mode != protocol.PositionFull {
		return viewPlanner{}, errs.New(errs.FailedPrecondition, "%s has a primary key: reading it by its plain name gives its current rows (startup full); read %s$changelog from %s", path, path, startup.Mode)
	}
	if stop.IsUnbounded() {
		return viewPlanner{}, errs.New(errs.FailedPrecondition, "%s has a primary key: an unbounded read of its changes is %s$changelog", path, path)
	}
	return viewPlanner{view: protocol.ViewSnapshot, bucketRange: snapshotRange(t, stop)}, nil
}

// snapshotRange starts at 0: the snapshot's offset is known when the ticket
// is redeemed.
func snapshotRange(t *table.Table, stop protocol.Position) func(b int) (protocol.TicketRange, error) {
	return func(b int) (protocol.TicketRange, error) {
		end, err := stopOffset(t, b, 0, stop)
		return protocol.TicketRange{Bucket: b, Start: 0, Stop: end}, err
	}
}

// planChangelog reads the changes; full on a primary-key table reads its
// current rows first, then the changes after them.
func planChangelog(t *table.Table, startup protocol.Position, stop protocol.Position) viewPlanner {
	if t.Current().Info.IsPrimaryKey() && startup.Mode == protocol.PositionFull {
		return viewPlanner{view: protocol.ViewChangelog, snapshotFirst: true, bucketRange: snapshotRange(t, stop)}
	}
	pl := planLog(t, startup, stop)
	pl.view = protocol.ViewChangelog
	return pl
}

// planLake reads the table's latest lake snapshot, whole.
func (env *Env) planLake(ctx context.Context, t *table.Table, path protocol.TablePath, startup protocol.Position, stop protocol.Position) (viewPlanner, error) {
	snap, err := env.Lakes.Snapshot(ctx, t)
	if err != nil {
		return viewPlanner{}, err
	}
	if err := env.checkLakeRead(t.Current().Info, path, snap, startup, stop); err != nil {
		return viewPlanner{}, err
	}
	return planLakeSnapshot(snap, laketier.Offsets(snap, t.Current().Info)), nil
}

// checkLakeRead checks a read of the lake view: of a snapshot (nil: there
// is none yet), whole and bounded.
func (env *Env) checkLakeRead(info *catalog.TableInfo, path protocol.TablePath, snap *lake.Snapshot, startup protocol.Position, stop protocol.Position) error {
	switch {
	case snap == nil:
		return laketier.NoSnapshot(info, path)
	case startup.Mode != protocol.PositionFull:
		return errs.New(errs.FailedPrecondition, "%s is the table's lake snapshot: it is read whole (startup full), not from %s", path.FullName(), startup.Mode)
	case stop.IsUnbounded() || stop.Offsets != nil || stop.PartitionOffsets != nil:
		return errs.New(errs.FailedPrecondition, "%s is the table's lake snapshot: it is bounded and has no stop offsets", path.FullName())
	}
	return nil
}

// planLakeSnapshot reads buckets of snap whose offsets are offsets.
func planLakeSnapshot(snap *lake.Snapshot, offsets map[int]int64) viewPlanner {
	return viewPlanner{view: protocol.ViewLake, lakeSnapshotID: &snap.ID, bucketRange: func(b int) (protocol.TicketRange, error) {
		end := offsets[b]
		return protocol.TicketRange{Bucket: b, Start: 0, Stop: &end}, nil
	}}
}

// planUnion reads the lake snapshot, then the log from the snapshot's
// offsets; the range is the log part's.
func (env *Env) planUnion(t *table.Table, snap *lake.Snapshot, startup protocol.Position, stop protocol.Position) viewPlanner {
	offsets := laketier.Offsets(snap, t.Current().Info)
	return viewPlanner{view: protocol.ViewUnion, lakeSnapshotID: &snap.ID, bucketRange: func(b int) (protocol.TicketRange, error) {
		start, err := StartOffset(t, b, startup)
		if err != nil {
			return protocol.TicketRange{}, err
		}
		if o, ok := offsets[b]; ok {
			start = max(start, o)
		}
		end, err := stopOffset(t, b, start, stop)
		return protocol.TicketRange{Bucket: b, Start: start, Stop: end}, err
	}}
}
