package engine

import (
	"context"
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
)

// Views a ticket can read.
const (
	ViewLog       = "log"
	ViewChangelog = "changelog"
	ViewSnapshot  = "snapshot"
	ViewLake      = "lake"
	ViewUnion     = "union"
	ViewLookup    = "lookup" // an inline lookup (PROTOCOL.md §6.3)
)

// System columns of the $changelog view (PROTOCOL.md §4.5).
const (
	ColChangeType      = "_change_type"
	ColLogOffset       = "_log_offset"
	ColCommitTimestamp = "_commit_timestamp"
)

var changelogFields = []arrow.Field{
	{Name: ColChangeType, Type: arrow.BinaryTypes.String},
	{Name: ColLogOffset, Type: arrow.PrimitiveTypes.Int64},
	{Name: ColCommitTimestamp, Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
}

// Ticket is a self-contained read of one bucket's range (PROTOCOL.md §4.3).
// Any server of the same data directory can redeem it, and clients may build
// one themselves.
type Ticket struct {
	V              int             `json:"v"`
	TableID        int64           `json:"table_id"`
	Table          string          `json:"table"`
	View           string          `json:"view"`
	Bucket         int             `json:"bucket"`
	Start          int64           `json:"start"`
	Stop           *int64          `json:"stop"`
	Columns        []string        `json:"columns"`
	Filter         json.RawMessage `json:"filter,omitempty"`
	LakeSnapshotID *int64          `json:"lake_snapshot_id"`
	Limit          *int64          `json:"limit"`
	// Then lists further bucket ranges that the same stream reads in turn, so
	// that a limited scan is one endpoint.
	Then        []TicketRange `json:"then,omitempty"`
	Compression string        `json:"compression,omitempty"`
	// Snapshot makes a changelog ticket start with the bucket's current rows,
	// as inserts, and go on from the offset they were taken at.
	Snapshot bool `json:"snapshot,omitempty"`
	// LakeStart makes a lake or union ticket skip the lake rows below this
	// offset, so that a reader resumes inside the lake part.
	LakeStart *int64 `json:"lake_start,omitempty"`
	// Lookup is the lookup of a lookup ticket.
	Lookup *LookupRequest `json:"lookup,omitempty"`
}

// TicketRange is one bucket's range of a ticket.
type TicketRange struct {
	Bucket int    `json:"bucket"`
	Start  int64  `json:"start"`
	Stop   *int64 `json:"stop"`
}

// ranges lists the ticket's bucket ranges in reading order.
func (tk *Ticket) ranges() []TicketRange {
	return append([]TicketRange{{Bucket: tk.Bucket, Start: tk.Start, Stop: tk.Stop}}, tk.Then...)
}

// ScanPlan is a planned scan: the result schema and one ticket per endpoint.
type ScanPlan struct {
	Schema         *arrow.Schema
	Tickets        []Ticket
	TotalRecords   int64 // -1 when unknown
	TableID        int64
	SchemaID       int32
	Buckets        int
	LakeSnapshotID *int64
}

// PlanScan validates a scan and fixes its offsets into tickets.
func (e *Engine) PlanScan(ctx context.Context, req ScanRequest) (*ScanPlan, error) {
	t, path, err := e.resolve(req.Table)
	if err != nil {
		return nil, err
	}
	info := t.current().info
	view, err := readView(info, path)
	if err != nil {
		return nil, err
	}
	if err := checkCompression(req.Compression); err != nil {
		return nil, err
	}
	if err := checkOffsetBuckets(req, path.FullName(), info.BucketCount()); err != nil {
		return nil, err
	}
	vp, err := planView(info, view, req.Columns, req.Filter)
	if err != nil {
		return nil, err
	}
	schema := vp.schema
	if req.Limit != nil && *req.Limit < 0 {
		return nil, errs.New(errs.Invalid, "limit %d is negative", *req.Limit)
	}
	buckets, err := scanBuckets(info, req.Buckets)
	if err != nil {
		return nil, err
	}

	startup := req.Startup
	if startup.IsZero() {
		startup.Mode = StartFull
		if view == ViewChangelog {
			startup.Mode = StartEarliest
		}
	}
	if view == ViewSnapshot {
		if startup.Mode != StartFull {
			return nil, errs.New(errs.Precondition, "%s has a primary key: reading it by its plain name gives its current rows (startup full); read %s$changelog from %s", path, path, startup.Mode)
		}
		if req.Stop.IsUnbounded() {
			return nil, errs.New(errs.Precondition, "%s has a primary key: an unbounded read of its changes is %s$changelog", path, path)
		}
	}
	// full on the changelog of a primary-key table: the current rows first,
	// then the changes after them.
	withSnapshot := view == ViewChangelog && info.IsPrimaryKey() && startup.Mode == StartFull
	// The lake view, and the union read of a lake-enabled log table: the
	// lake snapshot first, then the log from its offsets (PROTOCOL.md §7.3).
	// A primary-key table's plain name is served from its own state, which
	// always holds every current row.
	var snap *lake.Snapshot
	if view == ViewLake || (view == ViewLog && startup.Mode == StartFull && info.DatalakeEnabled()) {
		if snap, err = e.lakeSnapshot(ctx, t); err != nil {
			return nil, err
		}
		switch {
		case view == ViewLake && snap == nil:
			return nil, noLakeSnapshot(info, path)
		case view == ViewLake && startup.Mode != StartFull:
			return nil, errs.New(errs.Precondition, "%s is the table's lake snapshot: it is read whole (startup full), not from %s", path.FullName(), startup.Mode)
		case view == ViewLake && (req.Stop.IsUnbounded() || req.Stop.Offsets != nil):
			return nil, errs.New(errs.Precondition, "%s is the table's lake snapshot: it is bounded and has no stop offsets", path.FullName())
		case snap != nil && view == ViewLog:
			view = ViewUnion
		}
	}
	plan := &ScanPlan{Schema: schema, TableID: info.TableID, SchemaID: info.SchemaID, Buckets: info.BucketCount(), TotalRecords: 0}
	base := Ticket{V: 1, TableID: info.TableID, Table: path.FullName(), View: view, Columns: req.Columns, Filter: req.Filter, Compression: req.Compression, Snapshot: withSnapshot}
	if snap != nil {
		plan.LakeSnapshotID, base.LakeSnapshotID = &snap.ID, &snap.ID
		plan.TotalRecords = -1
	}
	var ranges []TicketRange
	for _, b := range buckets {
		start, err := e.startOffset(t, b, startup)
		if err != nil {
			return nil, err
		}
		if view == ViewSnapshot || withSnapshot {
			start = 0 // the snapshot's offset, known when the ticket is redeemed
		}
		if view == ViewLake {
			stop := snap.Offsets[b]
			ranges = append(ranges, TicketRange{Bucket: b, Start: 0, Stop: &stop})
			continue
		}
		if view == ViewUnion {
			if o, ok := snap.Offsets[b]; ok {
				start = max(start, o)
			}
		}
		stop, err := stopOffset(t, b, start, req.Stop)
		if err != nil {
			return nil, err
		}
		ranges = append(ranges, TicketRange{Bucket: b, Start: start, Stop: stop})
		if stop == nil || plan.TotalRecords < 0 {
			plan.TotalRecords = -1
		} else {
			plan.TotalRecords += *stop - start
		}
	}
	if req.Limit != nil {
		tk := base
		tk.Limit = req.Limit
		tk.Bucket, tk.Start, tk.Stop = ranges[0].Bucket, ranges[0].Start, ranges[0].Stop
		tk.Then = ranges[1:]
		plan.Tickets = []Ticket{tk}
		if plan.TotalRecords >= 0 {
			plan.TotalRecords = min(plan.TotalRecords, *req.Limit)
		}
	} else {
		for _, r := range ranges {
			tk := base
			tk.Bucket, tk.Start, tk.Stop = r.Bucket, r.Start, r.Stop
			plan.Tickets = append(plan.Tickets, tk)
		}
	}
	if info.IsPrimaryKey() {
		plan.TotalRecords = -1 // a state's row count is not kept; changelog offsets include empty batches
	}
	return plan, nil
}

// ScanSchema returns the result schema of a scan without planning offsets or
// touching data.
func (e *Engine) ScanSchema(req ScanRequest) (*arrow.Schema, error) {
	t, path, err := e.resolve(req.Table)
	if err != nil {
		return nil, err
	}
	info := t.current().info
	view, err := readView(info, path)
	if err != nil {
		return nil, err
	}
	vp, err := planView(info, view, req.Columns, req.Filter)
	if err != nil {
		return nil, err
	}
	return vp.schema, nil
}

// readView maps a table path to the view a scan of it reads.
func readView(info *catalog.TableInfo, path catalog.TablePath) (string, error) {
	switch path.View {
	case "changelog":
		return ViewChangelog, nil
	case "lake":
		if !info.DatalakeEnabled() {
			return "", noLakeSnapshot(info, path)
		}
		return ViewLake, nil
	}
	if info.IsPrimaryKey() {
		return ViewSnapshot, nil
	}
	return ViewLog, nil
}

func scanBuckets(info *catalog.TableInfo, want []int) ([]int, error) {
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
			return nil, errs.New(errs.Invalid, "bucket %d does not exist: %s has buckets 0 to %d", b, info.Path(), n-1)
		}
		if seen[b] {
			return nil, errs.New(errs.Invalid, "bucket %d is listed twice", b)
		}
		seen[b] = true
	}
	return want, nil
}

func (e *Engine) startOffset(t *table, bucket int, s Startup) (int64, error) {
	switch s.Mode {
	case StartFull, StartEarliest:
		return t.log.EarliestOffset(bucket), nil
	case StartLatest:
		return t.log.HighWatermark(bucket), nil
	case StartTimestamp:
		return t.log.OffsetForTime(bucket, s.Timestamp)
	}
	off, ok := s.Offsets[bucket]
	if !ok {
		return t.log.EarliestOffset(bucket), nil
	}
	if first, hw := t.log.EarliestOffset(bucket), t.log.HighWatermark(bucket); off < first || off > hw {
		return 0, errs.New(errs.OutOfRange, "startup offset %d of bucket %d is outside the retained range [%d, %d]", off, bucket, first, hw)
	}
	return off, nil
}

func stopOffset(t *table, bucket int, start int64, s Stop) (*int64, error) {
	if s.IsUnbounded() {
		return nil, nil
	}
	hw := t.log.HighWatermark(bucket)
	stop, ok := s.Offsets[bucket]
	if !ok {
		stop = hw
	}
	if stop > hw {
		return nil, errs.New(errs.OutOfRange, "stop offset %d of bucket %d is above the high watermark %d", stop, bucket, hw)
	}
	if stop < start {
		return nil, errs.New(errs.Invalid, "stop offset %d of bucket %d is below its start offset %d", stop, bucket, start)
	}
	return &stop, nil
}
