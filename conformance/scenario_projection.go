package conformance

// projection and changelog-columns: PROTOCOL.md §4.2 "columns" and the system
// columns of t$changelog (§4.5).

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/client"
)

// clockSlack is how far the server's clock may be from ours when a commit
// timestamp is checked against the time of the write.
const clockSlack = 2 * time.Second

func projectionOrder(ctx context.Context, env *Env) error {
	table := env.Table("projection")
	if _, err := createTable(ctx, env, simpleSpec(table, 2, true)); err != nil {
		return err
	}
	if _, err := writeIDs(ctx, env, client.WriteRequest{Table: table}, idRange(0, 20), idRange(20, 10)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	full, _, err := readBuckets(ctx, env, client.ScanRequest{Table: table})
	if err != nil {
		return fmt.Errorf("read all columns: %w", err)
	}
	defer releaseMap(full)
	want := simpleBatch(env.Mem, idRange(0, 30))
	defer want.Release()
	if err := compareByID(full, want); err != nil {
		return fmt.Errorf("read all columns: %w", err)
	}

	req := client.ScanRequest{Table: table, Columns: []string{"score", "id"}}
	proj, schema, err := readBuckets(ctx, env, req)
	if err != nil {
		return fmt.Errorf("read columns [score id]: %w", err)
	}
	defer releaseMap(proj)
	wantSchema := arrow.NewSchema([]arrow.Field{simpleSchema.Field(2), simpleSchema.Field(0)}, nil)
	if err := sameSchema(schema, wantSchema); err != nil {
		return fmt.Errorf("columns [score id]: %w", err)
	}
	for _, b := range sortedKeys(full, proj) {
		f, p := full[b], proj[b]
		if f == nil || p == nil {
			return fmt.Errorf("columns [score id]: bucket %d has rows in one read and none in the other", b)
		}
		if !array.Equal(p.Column(0), f.Column(2)) || !array.Equal(p.Column(1), f.Column(0)) {
			return fmt.Errorf("columns [score id], bucket %d: got score %s id %s, want score %s id %s",
				b, p.Column(0), p.Column(1), f.Column(2), f.Column(0))
		}
	}
	return nil
}

func changelogColumns(ctx context.Context, env *Env) error {
	table := env.Table("changelog")
	if _, err := createTable(ctx, env, simpleSpec(table, 2, true)); err != nil {
		return err
	}
	// Two batches, each with the window in which it was committed.
	var results []client.PutResult
	var windows [][2]int64
	for _, ids := range [][]int64{idRange(0, 20), idRange(20, 10)} {
		before := time.Now().UnixMilli()
		res, err := writeIDs(ctx, env, client.WriteRequest{Table: table}, ids)
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
		results = append(results, res...)
		windows = append(windows, [2]int64{before - clockSlack.Milliseconds(), time.Now().UnixMilli() + clockSlack.Milliseconds()})
	}
	ends := endOffsets(results...)

	plan, err := env.Client.Plan(ctx, client.ScanRequest{Table: table + "$changelog"})
	if err != nil {
		return fmt.Errorf("plan %s$changelog: %w", table, err)
	}
	wantFields := []arrow.Field{
		{Name: "_change_type", Type: arrow.BinaryTypes.String},
		{Name: "_log_offset", Type: arrow.PrimitiveTypes.Int64},
		{Name: "_commit_timestamp", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
	}
	wantFields = append(wantFields, simpleSchema.Fields()...)
	if err := sameNamesAndTypes(plan.Schema, wantFields); err != nil {
		return fmt.Errorf("%s$changelog default columns: %w", table, err)
	}

	plain, err := scanIDs(ctx, env, client.ScanRequest{Table: table})
	if err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	cols := []string{"_log_offset", "id", "_change_type", "_commit_timestamp"}
	got, schema, err := readBuckets(ctx, env, client.ScanRequest{Table: table + "$changelog", Columns: cols})
	if err != nil {
		return fmt.Errorf("read %s$changelog: %w", table, err)
	}
	defer releaseMap(got)
	if err := sameNamesAndTypes(schema, []arrow.Field{wantFields[1], wantFields[3], wantFields[0], wantFields[2]}); err != nil {
		return fmt.Errorf("%s$changelog columns %v: %w", table, cols, err)
	}
	for b := range 2 {
		rec := got[b]
		if rec == nil && ends[b] == 0 {
			continue
		}
		if rec == nil {
			return fmt.Errorf("$changelog bucket %d: no rows, want %d", b, ends[b])
		}
		if err := checkChangelogBucket(b, rec, plain[b], ends[b], windows); err != nil {
			return err
		}
	}
	return nil
}

// checkChangelogBucket checks one bucket of a $changelog read with columns
// _log_offset, id, _change_type, _commit_timestamp against the plain read of
// the bucket and the windows in which the batches of ids [0,20) and [20,30)
// were committed.
func checkChangelogBucket(b int, rec arrow.RecordBatch, plain []int64, end int64, windows [][2]int64) error {
	offsets := rec.Column(0).(*array.Int64)
	ids := rec.Column(1).(*array.Int64)
	types := rec.Column(2).(*array.String)
	stamps := rec.Column(3).(*array.Timestamp)
	if rec.NumRows() != end {
		return fmt.Errorf("$changelog bucket %d: %d rows, want %d (the bucket's end offset)", b, rec.NumRows(), end)
	}
	if err := equalInts(fmt.Sprintf("$changelog bucket %d ids", b), ids.Int64Values(), plain); err != nil {
		return err
	}
	for i := range int(rec.NumRows()) {
		if offsets.IsNull(i) || offsets.Value(i) != int64(i) {
			return fmt.Errorf("$changelog bucket %d row %d: _log_offset %s, want %d", b, i, offsets.ValueStr(i), i)
		}
		if types.IsNull(i) || types.Value(i) != "insert" {
			return fmt.Errorf("$changelog bucket %d offset %d: _change_type %s, want insert (a log table)", b, i, types.ValueStr(i))
		}
		w := windows[0]
		if ids.Value(i) >= 20 {
			w = windows[1]
		}
		ts := int64(stamps.Value(i))
		if stamps.IsNull(i) || ts < w[0] || ts > w[1] {
			return fmt.Errorf("$changelog bucket %d offset %d (id %d): _commit_timestamp %s, want between %s and %s (the write's window ± %s)",
				b, i, ids.Value(i), stamps.ValueStr(i), time.UnixMilli(w[0]).UTC(), time.UnixMilli(w[1]).UTC(), clockSlack)
		}
		if i > 0 && ts < int64(stamps.Value(i-1)) {
			return fmt.Errorf("$changelog bucket %d offset %d: _commit_timestamp %s is before the previous offset's %s", b, i, stamps.ValueStr(i), stamps.ValueStr(i-1))
		}
	}
	return nil
}

// sameNamesAndTypes checks a schema's column names and types, in order.
func sameNamesAndTypes(got *arrow.Schema, want []arrow.Field) error {
	if got == nil {
		return fmt.Errorf("no result schema")
	}
	if got.NumFields() != len(want) {
		return fmt.Errorf("%d columns (%s), want %d", got.NumFields(), got, len(want))
	}
	for i, g := range got.Fields() {
		if g.Name != want[i].Name || !arrow.TypeEqual(g.Type, want[i].Type) {
			return fmt.Errorf("column %d is %s %s, want %s %s", i, g.Name, g.Type, want[i].Name, want[i].Type)
		}
	}
	return nil
}
