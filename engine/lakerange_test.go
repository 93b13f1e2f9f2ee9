package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// tsRows is a batch of (id, ts) rows of a TIMESTAMP(3) column.
func tsRows(ids []int64, ts []int64) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memtest.Shared, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	for _, v := range ts {
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(v))
	}
	return b.NewRecordBatch()
}

func tsSpec(name string, lake bool, pk bool) protocol.TableSpec {
	no := false
	spec := protocol.TableSpec{Table: name,
		Columns: []protocol.Column{{Name: "id", Type: "BIGINT", Nullable: &no}, {Name: "ts", Type: "TIMESTAMP(3)"}},
		Options: map[string]string{"bucket.num": "1"}}
	if lake {
		spec.Options["table.datalake.enabled"] = "true"
	}
	if pk {
		spec.PrimaryKey = []string{"id"}
	}
	return spec
}

// A lake-enabled table refuses at intake a timestamp Iceberg cannot hold
// (its microseconds leave 64 bits), naming the row and column, and takes
// the bounds themselves, which tier.
func TestLakeTableRefusesTimestampsBeyondIceberg(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	const maxMs, minMs = math.MaxInt64 / 1000, math.MinInt64 / 1000
	partitioned := tsSpec("part_ts", true, false)
	partitioned.PartitionKeys = []string{"id"}
	if _, err := e.CreateTable(t.Context(), partitioned, false); err != nil {
		t.Fatal(err)
	}
	// A partitioned table's batch is checked whole: no partition of it
	// takes its rows.
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "part_ts"}, tsRows([]int64{1, 2}, []int64{0, math.MaxInt64})); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("part_ts: %v, want INVALID_ARGUMENT", err)
	}
	if _, ids := scanTimestamps(t, e, "part_ts"); len(ids) != 0 {
		t.Errorf("part_ts holds %v after a refused batch, want nothing", ids)
	}
	for _, pk := range []bool{false, true} {
		name := map[bool]string{false: "log_ts", true: "pk_ts"}[pk]
		if _, err := e.CreateTable(t.Context(), tsSpec(name, true, pk), false); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []int64{math.MaxInt64, maxMs + 1, minMs - 1, math.MinInt64} {
			_, err := writeEvents(t, e, protocol.WriteRequest{Table: name}, tsRows([]int64{1, 2}, []int64{0, bad}))
			if !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), "row 1, column ts:") {
				t.Errorf("%s: writing ts %d: %v, want INVALID_ARGUMENT naming row 1 and column ts", name, bad, err)
			}
		}
		if _, err := writeEvents(t, e, protocol.WriteRequest{Table: name}, tsRows([]int64{1, 2}, []int64{maxMs, minMs})); err != nil {
			t.Fatalf("%s: the bounds: %v", name, err)
		}
		if _, err := e.TierNow(t.Context(), name); err != nil {
			t.Errorf("%s: tiering the bounds: %v", name, err)
		}
		_, rows := scanTimestamps(t, e, name+"$lake")
		if want := []int64{maxMs, minMs}; len(rows) != 2 || rows[0] != want[0] || rows[1] != want[1] {
			t.Errorf("%s$lake holds %v, want %v", name, rows, want)
		}
	}
}

// scanTimestamps reads a table's ts column in id order.
func scanTimestamps(t *testing.T, e *Engine, table string) (*ScanPlan, []int64) {
	t.Helper()
	plan, err := e.PlanScan(t.Context(), protocol.ScanRequest{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]int64{}
	for _, tk := range plan.Tickets {
		rs, err := e.OpenRead(tk)
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.Run(t.Context(), func(rec arrow.RecordBatch, _ protocol.BatchMeta) error {
			ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
			ts := rec.Column(rec.Schema().FieldIndices("ts")[0]).(*array.Timestamp)
			for i := range ids.Len() {
				byID[ids.Value(i)] = int64(ts.Value(i))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var out []int64
	for id := int64(1); id <= int64(len(byID)); id++ {
		out = append(out, byID[id])
	}
	return plan, out
}

// failingGauge reads fluxgate.lake.round.failing of table from reader.
func failingGauge(t *testing.T, reader *sdkmetric.ManualReader, table string) (int64, bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "fluxgate.lake.round.failing" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Gauge[int64]).DataPoints {
				if v, _ := dp.Attributes.Value("table"); v.AsString() == table {
					return dp.Value, true
				}
			}
		}
	}
	return 0, false
}

// A value the lake cannot hold that is in the log already (written before
// the lake was enabled) stops the table's rounds visibly: tier-now is
// FAILED_PRECONDITION naming table, bucket, offset and column,
// lake-snapshot says so, and so does the fluxgate.lake.round.failing gauge;
// log retention keeps the untiered log. Once the row is no longer to be
// tiered (here: deleted from a primary-key table), rounds go on.
func TestTieringStopsVisiblyAtAValueTheLakeCannotHold(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	e := openPartitioned(t, t.TempDir(), Options{Meter: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("test")})
	defer e.Close()
	for _, pk := range []bool{false, true} {
		name := map[bool]string{false: "events_ts", true: "users_ts"}[pk]
		if _, err := e.CreateTable(t.Context(), tsSpec(name, false, pk), false); err != nil {
			t.Fatal(err)
		}
		if _, err := writeEvents(t, e, protocol.WriteRequest{Table: name}, tsRows([]int64{1, 2, 3}, []int64{0, math.MaxInt64, 5})); err != nil {
			t.Fatalf("%s: a table without the lake takes any timestamp: %v", name, err)
		}
		if _, err := e.AlterTable(t.Context(), name, map[string]string{"table.datalake.enabled": "true"}, nil, nil); err != nil {
			t.Fatal(err)
		}
		_, err := e.TierNow(t.Context(), name)
		want := "bucket 0, offset 1, column ts: 9223372036854775807ms is beyond the lake's range"
		if !errs.Is(err, errs.FailedPrecondition) || !strings.HasPrefix(err.Error(), "tiering fluss."+name+": ") || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: tier-now: %v, want FAILED_PRECONDITION naming the table and %q", name, err, want)
		}
		if _, err := e.LakeSnapshot(t.Context(), name); !errs.Is(err, errs.NotFound) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: lake-snapshot: %v, want NOT_FOUND saying %q", name, err, want)
		}
		if v, ok := failingGauge(t, reader, "fluss."+name); v != 1 {
			t.Errorf("%s: fluxgate.lake.round.failing is %d (reported %v), want 1", name, v, ok)
		}
		if !pk {
			continue
		}
		// A committed snapshot, then the failure: lake-snapshot answers
		// the snapshot with round_failure.
		if _, err := writeEvents(t, e, protocol.WriteRequest{Table: name, Mode: protocol.ModeDelete}, tsRows([]int64{2}, []int64{0})); err != nil {
			t.Fatal(err)
		}
		if _, err := e.TierNow(t.Context(), name); err != nil {
			t.Fatalf("%s: a round after the row's delete: %v", name, err)
		}
		snap, err := e.LakeSnapshot(t.Context(), name)
		if err != nil || snap.RoundFailure != nil {
			t.Errorf("%s: lake-snapshot after a round that succeeded: %+v, %v; want no round_failure", name, snap, err)
		}
		if v, _ := failingGauge(t, reader, "fluss."+name); v != 0 {
			t.Errorf("%s: fluxgate.lake.round.failing is %d after a round that succeeded, want 0", name, v)
		}
		if _, rows := scanTimestamps(t, e, name+"$lake"); len(rows) != 2 {
			t.Errorf("%s$lake holds %v, want ids 1 and 3", name, rows)
		}
	}
}

// insert_if_not_exists into a lake-enabled table refuses a key the lake
// cannot hold, as writes do, and inserts nothing.
func TestLakeTableLookupInsertRefusesTimestampsBeyondIceberg(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	no := false
	spec := protocol.TableSpec{Table: "seen",
		Columns:    []protocol.Column{{Name: "ts", Type: "TIMESTAMP(3)", Nullable: &no}, {Name: "n", Type: "BIGINT"}},
		PrimaryKey: []string{"ts"}, Options: map[string]string{"bucket.num": "1", "table.datalake.enabled": "true"}}
	if _, err := e.CreateTable(t.Context(), spec, false); err != nil {
		t.Fatal(err)
	}
	l, err := e.OpenLookup(protocol.LookupRequest{Table: "seen", InsertIfNotExists: true})
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memtest.Allocator(t), arrow.NewSchema([]arrow.Field{{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}}}, nil))
	b.Field(0).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1, math.MaxInt64}, nil)
	keys := b.NewRecordBatch()
	b.Release()
	defer keys.Release()
	ans, _, err := l.Lookup(t.Context(), keys)
	if err == nil {
		ans.Release()
	}
	if !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), "column ts: 9223372036854775807ms is beyond the lake's range") {
		t.Fatalf("insert_if_not_exists of ts 2^63-1 ms: %v, want INVALID_ARGUMENT naming the column", err)
	}
	plan, err := e.PlanScan(t.Context(), protocol.ScanRequest{Table: "seen"})
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, tk := range plan.Tickets {
		rs, err := e.OpenRead(tk)
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.Run(t.Context(), func(rec arrow.RecordBatch, _ protocol.BatchMeta) error { rows += rec.NumRows(); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if rows != 0 {
		t.Errorf("seen holds %d rows after the refused insert, want none", rows)
	}
}
