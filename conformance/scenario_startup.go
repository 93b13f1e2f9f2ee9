package conformance

// startup-modes, stop-offsets, limit, buckets-subset and list-offsets: where
// a scan starts and stops (PROTOCOL.md §4.2) and list-offsets (§3), on a
// table written in two batches A and B with time between them.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/client"
)

// abTable is a two-bucket simple table holding batch A (ids 0..19), then,
// some milliseconds later, batch B (ids 100..119).
type abTable struct {
	name    string
	tableID int64
	// splitMs lies after every commit timestamp of A and at or before every
	// one of B, by the server's clock.
	splitMs    int64
	endA, endB map[int]int64   // every bucket's end offset after A and after B
	rows, a, b map[int][]int64 // per bucket, the ids in offset order: all, A's, B's
}

const abBuckets = 2

func writeAB(ctx context.Context, env *Env, name string) (*abTable, error) {
	t := &abTable{name: env.Table(name)}
	info, err := createTable(ctx, env, simpleSpec(t.name, abBuckets, true))
	if err != nil {
		return nil, err
	}
	t.tableID = info.TableID
	resA, err := writeIDs(ctx, env, client.WriteRequest{Table: t.name}, idRange(0, 20))
	if err != nil {
		return nil, fmt.Errorf("write A: %w", err)
	}
	// Commit timestamps have millisecond precision: keep A and B apart.
	if err := sleep(ctx, 30*time.Millisecond); err != nil {
		return nil, err
	}
	resB, err := writeIDs(ctx, env, client.WriteRequest{Table: t.name}, idRange(100, 20))
	if err != nil {
		return nil, fmt.Errorf("write B: %w", err)
	}
	t.endA, t.endB = map[int]int64{}, map[int]int64{}
	for b := range abBuckets {
		t.endA[b], t.endB[b] = 0, 0
	}
	for b, end := range endOffsets(resA...) {
		t.endA[b], t.endB[b] = end, end
	}
	for b, end := range endOffsets(resB...) {
		t.endB[b] = end
	}
	if t.rows, err = scanIDs(ctx, env, client.ScanRequest{Table: t.name}); err != nil {
		return nil, fmt.Errorf("read back: %w", err)
	}
	t.a, t.b = map[int][]int64{}, map[int][]int64{}
	for b := range abBuckets {
		rows := t.rows[b]
		if int64(len(rows)) != t.endB[b] {
			return nil, fmt.Errorf("read back: bucket %d has %d rows, but the writes acknowledged end offset %d", b, len(rows), t.endB[b])
		}
		t.a[b], t.b[b] = rows[:t.endA[b]], rows[t.endA[b]:]
		if slices.ContainsFunc(t.a[b], func(id int64) bool { return id >= 100 }) || slices.ContainsFunc(t.b[b], func(id int64) bool { return id < 100 }) {
			return nil, fmt.Errorf("read back: bucket %d holds %v; want A's ids (< 100) at offsets below %d and B's after", b, rows, t.endA[b])
		}
	}
	if t.splitMs, err = splitTime(ctx, env, t.name); err != nil {
		return nil, err
	}
	return t, nil
}

// splitTime finds, from the server's own commit timestamps, a time after A
// and not after B.
func splitTime(ctx context.Context, env *Env, table string) (int64, error) {
	recs, _, err := readBuckets(ctx, env, client.ScanRequest{Table: table + "$changelog", Columns: []string{"id", "_commit_timestamp"}})
	if err != nil {
		return 0, fmt.Errorf("read %s$changelog: %w", table, err)
	}
	defer releaseMap(recs)
	lastA, firstB := int64(-1<<63), int64(1<<63-1)
	for _, rec := range recs {
		ids, ok1 := rec.Column(0).(*array.Int64)
		ts, ok2 := rec.Column(1).(*array.Timestamp)
		if !ok1 || !ok2 {
			return 0, fmt.Errorf("%s$changelog [id _commit_timestamp]: unexpected schema %s", table, rec.Schema())
		}
		for i := range ids.Len() {
			if ids.Value(i) < 100 {
				lastA = max(lastA, int64(ts.Value(i)))
			} else {
				firstB = min(firstB, int64(ts.Value(i)))
			}
		}
	}
	if lastA >= firstB {
		return 0, fmt.Errorf("%s$changelog: batch A's last commit timestamp %d is not before batch B's first %d, although B was written 30 ms after A was acknowledged", table, lastA, firstB)
	}
	return lastA + 1, nil
}

func startupModes(ctx context.Context, env *Env) error {
	t, err := writeAB(ctx, env, "startup")
	if err != nil {
		return err
	}
	empty := map[int][]int64{0: nil, 1: nil}
	cases := []struct {
		startup client.Position
		want    map[int][]int64
	}{
		{client.Full, t.rows},
		{client.Earliest, t.rows},
		{client.Latest, empty},
		{client.AtTimestamp(t.splitMs), t.b},
		// Bucket 1 is not named: it starts at its earliest offset.
		{client.AtOffsets(map[int]int64{0: t.endA[0]}), map[int][]int64{0: t.b[0], 1: t.rows[1]}},
		{client.AtOffsets(t.endA), t.b},
	}
	for _, tc := range cases {
		what := fmt.Sprintf("startup %s", tc.startup)
		plan, err := env.Client.Plan(ctx, client.ScanRequest{Table: t.name, Startup: tc.startup})
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := checkPlan(what, plan, t.tableID, rowCount(tc.want)); err != nil {
			return err
		}
		got, err := planIDs(ctx, env, plan)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := equalBuckets(what, got, tc.want); err != nil {
			return err
		}
	}
	// A PATH descriptor is the scan with every default.
	plan, err := env.Client.PlanTable(ctx, t.name)
	if err != nil {
		return fmt.Errorf("PATH descriptor: %w", err)
	}
	if err := checkPlan("PATH descriptor", plan, t.tableID, rowCount(t.rows)); err != nil {
		return err
	}
	got, err := planIDs(ctx, env, plan)
	if err != nil {
		return fmt.Errorf("PATH descriptor: %w", err)
	}
	return equalBuckets("PATH descriptor", got, t.rows)
}

// checkPlan checks a FlightInfo of the two-bucket table: one endpoint per
// bucket, its app_metadata, and total_records when the server gives it.
func checkPlan(what string, plan *client.ScanPlan, tableID int64, rows int) error {
	if len(plan.Endpoints) != abBuckets {
		return fmt.Errorf("%s: %d endpoints, want one per bucket (%d)", what, len(plan.Endpoints), abBuckets)
	}
	if plan.Meta.TableID != tableID || plan.Meta.Buckets != abBuckets {
		return fmt.Errorf("%s: FlightInfo app_metadata %+v, want table_id %d and buckets %d", what, plan.Meta, tableID, abBuckets)
	}
	if plan.TotalRecords != -1 && plan.TotalRecords != int64(rows) {
		return fmt.Errorf("%s: FlightInfo total_records %d, but the scan returns %d rows", what, plan.TotalRecords, rows)
	}
	return nil
}

func stopOffsets(ctx context.Context, env *Env) error {
	t, err := writeAB(ctx, env, "stop")
	if err != nil {
		return err
	}
	cases := []struct {
		startup, stop client.Position
		want          map[int][]int64
	}{
		{client.Earliest, client.AtOffsets(t.endA), t.a},
		// Bucket 1 is not named: it stops at the high watermark.
		{client.Earliest, client.AtOffsets(map[int]int64{0: t.endA[0]}), map[int][]int64{0: t.a[0], 1: t.rows[1]}},
		{client.AtOffsets(t.endA), client.AtOffsets(t.endB), t.b},
		{client.AtOffsets(t.endA), client.AtOffsets(t.endA), map[int][]int64{0: nil, 1: nil}},
		{client.Earliest, client.Latest, t.rows},
	}
	for _, tc := range cases {
		req := client.ScanRequest{Table: t.name, Startup: tc.startup, Stop: tc.stop}
		got, err := scanIDs(ctx, env, req)
		if err != nil {
			return fmt.Errorf("startup %s stop %s: %w", tc.startup, tc.stop, err)
		}
		if err := equalBuckets(fmt.Sprintf("startup %s stop %s", tc.startup, tc.stop), got, tc.want); err != nil {
			return err
		}
	}
	return nil
}

func limitScan(ctx context.Context, env *Env) error {
	t, err := writeAB(ctx, env, "limit")
	if err != nil {
		return err
	}
	total := rowCount(t.rows)
	for _, limit := range []int64{1, 7, int64(total), 1000} {
		plan, err := env.Client.Plan(ctx, client.ScanRequest{Table: t.name, Limit: &limit})
		if err != nil {
			return fmt.Errorf("limit %d: %w", limit, err)
		}
		if len(plan.Endpoints) != 1 {
			return fmt.Errorf("limit %d: the plan has %d endpoints, want 1", limit, len(plan.Endpoints))
		}
		got, err := planIDs(ctx, env, plan)
		if err != nil {
			return fmt.Errorf("limit %d: %w", limit, err)
		}
		want := min(int(limit), total)
		if n := rowCount(got); n != want {
			return fmt.Errorf("limit %d: read %d rows, want exactly %d (the table has %d)", limit, n, want, total)
		}
		// The endpoint reads the buckets in turn: each bucket's rows are the
		// start of that bucket.
		for b, ids := range got {
			if len(ids) > len(t.rows[b]) || !slices.Equal(ids, t.rows[b][:len(ids)]) {
				return fmt.Errorf("limit %d: bucket %d returned %v, which is not the start of the bucket's rows %v", limit, b, ids, t.rows[b])
			}
		}
	}
	return nil
}

func bucketsSubset(ctx context.Context, env *Env) error {
	t, err := writeAB(ctx, env, "buckets")
	if err != nil {
		return err
	}
	for b := range abBuckets {
		plan, err := env.Client.Plan(ctx, client.ScanRequest{Table: t.name, Buckets: []int{b}})
		if err != nil {
			return fmt.Errorf("buckets [%d]: %w", b, err)
		}
		if len(plan.Endpoints) != 1 {
			return fmt.Errorf("buckets [%d]: the plan has %d endpoints, want 1", b, len(plan.Endpoints))
		}
		got, err := planIDs(ctx, env, plan)
		if err != nil {
			return fmt.Errorf("buckets [%d]: %w", b, err)
		}
		if err := equalBuckets(fmt.Sprintf("buckets [%d]", b), got, map[int][]int64{b: t.rows[b]}); err != nil {
			return err
		}
	}
	return nil
}

func listOffsets(ctx context.Context, env *Env) error {
	t, err := writeAB(ctx, env, "offsets")
	if err != nil {
		return err
	}
	cases := []struct {
		at      client.Position
		buckets []int
		want    map[int]int64
	}{
		{client.Earliest, nil, map[int]int64{0: 0, 1: 0}},
		{client.Latest, nil, t.endB},
		{client.AtTimestamp(t.splitMs), nil, t.endA},
		{client.AtTimestamp(0), nil, map[int]int64{0: 0, 1: 0}},
		{client.Latest, []int{1}, map[int]int64{1: t.endB[1]}},
	}
	for _, tc := range cases {
		got, err := env.Client.ListOffsets(ctx, t.name, tc.at, tc.buckets)
		if err != nil {
			return fmt.Errorf("list-offsets at %s buckets %v: %w", tc.at, tc.buckets, err)
		}
		if err := equalOffsets(fmt.Sprintf("list-offsets at %s buckets %v", tc.at, tc.buckets), got, tc.want); err != nil {
			return err
		}
	}
	return nil
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
