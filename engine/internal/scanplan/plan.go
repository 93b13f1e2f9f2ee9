// Package scanplan plans a scan: what every view shares (the table,
// columns, filter, buckets, limit, startup default) is checked here; the
// view's planner (planners.go) fixes each bucket's range, and a partitioned
// table's partitions are planned each as a table (partplan.go).
package scanplan

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/engine/internal/scanread"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Plan is a planned scan: the result schema and one ticket per endpoint.
type Plan struct {
	Schema         *arrow.Schema
	Tickets        []protocol.Ticket
	TotalRecords   int64 // -1 when unknown
	TableID        int64
	SchemaID       int32
	Buckets        int
	LakeSnapshotID *int64
	// Partitions are the planned partitions of a partitioned table, in name
	// order; nil for a table that is not partitioned.
	Partitions []protocol.PartitionInfo
}

// Scan validates a scan of the table it names and fixes its offsets into
// tickets.
func (env *Env) Scan(ctx context.Context, req protocol.ScanRequest) (*Plan, error) {
	info, path, err := env.Tables.Info(req.Table)
	if err != nil {
		return nil, err
	}
	if info.IsPartitioned() {
		return env.planPartitioned(ctx, info, path, req)
	}
	if err := checkNotPartitioned(info, req); err != nil {
		return nil, err
	}
	t, err := env.Tables.Table(info)
	if err != nil {
		return nil, err
	}
	info = t.Current().Info
	if err := checkOffsetBuckets(req, path.FullName(), info.BucketCount()); err != nil {
		return nil, err
	}
	view, vp, startup, err := env.planCommon(info, path, req)
	if err != nil {
		return nil, err
	}
	buckets, err := Buckets(info, req.Buckets)
	if err != nil {
		return nil, err
	}
	pl, err := env.planner(ctx, t, path, view, startup, req.Stop)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Schema: vp.Schema, TableID: info.TableID, SchemaID: info.SchemaID, Buckets: info.BucketCount()}
	base := protocol.Ticket{V: 1, TableID: info.TableID, Table: path.FullName(), View: pl.view, Columns: req.Columns, Filter: req.Filter, Compression: req.Compression, Snapshot: pl.snapshotFirst}
	plan.LakeSnapshotID, base.LakeSnapshotID = pl.lakeSnapshotID, pl.lakeSnapshotID
	// A lake snapshot's row count is not kept, nor a state's; changelog
	// offsets include empty batches.
	counted := pl.lakeSnapshotID == nil && !info.IsPrimaryKey()
	ranges := make([]protocol.TicketRange, len(buckets))
	for i, b := range buckets {
		if ranges[i], err = pl.bucketRange(b); err != nil {
			return nil, err
		}
	}
	plan.addTickets(base, ranges, req.Limit, counted)
	return plan, nil
}

// addTickets makes the plan's tickets of ranges from base: one per range, or
// with a limit one that reads them in turn. counted says whether the ranges'
// offsets count rows, for TotalRecords.
func (plan *Plan) addTickets(base protocol.Ticket, ranges []protocol.TicketRange, limit *int64, counted bool) {
	for _, r := range ranges {
		if counted && r.Stop != nil {
			plan.TotalRecords += *r.Stop - r.Start
		} else {
			counted = false
		}
	}
	if !counted {
		plan.TotalRecords = -1
	}
	if len(ranges) == 0 {
		return
	}
	if limit != nil {
		tk := base
		tk.Limit = limit
		tk.PartitionID, tk.Partition = ranges[0].PartitionID, ranges[0].Partition
		tk.Bucket, tk.Start, tk.Stop = ranges[0].Bucket, ranges[0].Start, ranges[0].Stop
		tk.Then = ranges[1:]
		plan.Tickets = []protocol.Ticket{tk}
		if plan.TotalRecords >= 0 {
			plan.TotalRecords = min(plan.TotalRecords, *limit)
		}
		return
	}
	for _, r := range ranges {
		tk := base
		tk.PartitionID, tk.Partition = r.PartitionID, r.Partition
		tk.Bucket, tk.Start, tk.Stop = r.Bucket, r.Start, r.Stop
		plan.Tickets = append(plan.Tickets, tk)
	}
}

// planCommon checks what every scan shares, whatever its table: its view,
// compression, columns, filter and limit; it fills in the default startup.
func (env *Env) planCommon(info *catalog.TableInfo, path protocol.TablePath, req protocol.ScanRequest) (string, *viewplan.Plan, protocol.Position, error) {
	startup := req.Startup
	view, err := env.readView(info, path)
	if err != nil {
		return "", nil, startup, err
	}
	if err := scanread.CheckCompression(req.Compression); err != nil {
		return "", nil, startup, err
	}
	vp, err := viewplan.Resolve(info, view, req.Columns, req.Filter)
	if err != nil {
		return "", nil, startup, err
	}
	if req.Limit != nil && *req.Limit < 0 {
		return "", nil, startup, errs.New(errs.InvalidArgument, "limit %d is negative", *req.Limit)
	}
	// A limited scan reads its buckets in turn, and an unbounded bucket never ends.
	if req.Limit != nil && req.Stop.IsUnbounded() {
		return "", nil, startup, errs.New(errs.InvalidArgument, `limit with stop "none" (a follow): a limited scan reads its buckets in turn and would never leave the first; count rows in the client instead`)
	}
	if startup.IsZero() {
		startup.Mode = protocol.PositionFull
		if view == protocol.ViewChangelog {
			startup.Mode = protocol.PositionEarliest
		}
	}
	return view, vp, startup, nil
}

// Schema returns the result schema of a scan without planning offsets or
// touching data.
func (env *Env) Schema(req protocol.ScanRequest) (*arrow.Schema, error) {
	info, path, err := env.Tables.Info(req.Table)
	if err != nil {
		return nil, err
	}
	view, err := env.readView(info, path)
	if err != nil {
		return nil, err
	}
	vp, err := viewplan.Resolve(info, view, req.Columns, req.Filter)
	if err != nil {
		return nil, err
	}
	return vp.Schema, nil
}

// readView maps a table path to the view a scan of it reads.
func (env *Env) readView(info *catalog.TableInfo, path protocol.TablePath) (string, error) {
	switch path.View {
	case "changelog":
		return protocol.ViewChangelog, nil
	case "lake":
		if !info.DatalakeEnabled() {
			return "", laketier.NoSnapshot(info, path)
		}
		return protocol.ViewLake, nil
	}
	if info.IsPrimaryKey() {
		return protocol.ViewSnapshot, nil
	}
	return protocol.ViewLog, nil
}

// Buckets returns the buckets a scan or list-offsets names: all when it
// names none.
func Buckets(info *catalog.TableInfo, want []int) ([]int, error) {
	n := info.BucketCount()
	if len(want) == 0 {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	seen := map[int]bool{}
	for _, b := range want {
		if b < 0 || b >= n {
			return nil, errs.New(errs.InvalidArgument, "bucket %d does not exist: %s has buckets 0 to %d", b, info.Path(), n-1)
		}
		if seen[b] {
			return nil, errs.New(errs.InvalidArgument, "bucket %d is listed twice", b)
		}
		seen[b] = true
	}
	return want, nil
}

// StartOffset returns the offset of bucket at s: where a read from s starts,
// and what list-offsets answers.
func StartOffset(t *table.Table, bucket int, s protocol.Position) (int64, error) {
	switch s.Mode {
	case protocol.PositionFull, protocol.PositionEarliest:
		return t.Log.EarliestOffset(bucket), nil
	case protocol.PositionLatest:
		return t.Log.HighWatermark(bucket), nil
	case protocol.PositionTimestamp:
		return t.Log.OffsetForTime(bucket, s.Timestamp)
	}
	off, ok := s.Offsets[bucket]
	if !ok {
		return t.Log.EarliestOffset(bucket), nil
	}
	if first, hw := t.Log.EarliestOffset(bucket), t.Log.HighWatermark(bucket); off < first || off > hw {
		return 0, errs.New(errs.OutOfRange, "startup offset %d of bucket %d is outside the retained range [%d, %d]", off, bucket, first, hw)
	}
	return off, nil
}

// stopOffset returns where a read of bucket from start stops at s: nil
// when unbounded.
func stopOffset(t *table.Table, bucket int, start int64, s protocol.Position) (*int64, error) {
	if s.IsUnbounded() {
		return nil, nil
	}
	hw := t.Log.HighWatermark(bucket)
	stop, ok := s.Offsets[bucket]
	if !ok {
		stop = hw
	}
	if stop > hw {
		return nil, errs.New(errs.OutOfRange, "stop offset %d of bucket %d is above the high watermark %d", stop, bucket, hw)
	}
	if stop < start {
		return nil, errs.New(errs.InvalidArgument, "stop offset %d of bucket %d is below its start offset %d", stop, bucket, start)
	}
	return &stop, nil
}
