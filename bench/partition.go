package bench

// The partition pruning workloads of fluxgate bench (issue 20): the events,
// spread over 30 day partitions in ts order, one day read through Flight by
// a filter on the partition column (partition/1of30) or by naming its
// partition (partition/1of30-named), against the full scan of the same
// table. The engine's BenchmarkPartitionPruning measures the filter without
// Flight and the client.

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/client"
)

const (
	benchPartTable = "fluss.bench_events_by_day"
	benchPartDays  = 30
	benchPartDay   = 15 // the day the filter keeps
)

// benchPartDT is the partition of day d (0-based): 20261101 to 20261130.
func benchPartDT(d int) string { return fmt.Sprintf("202611%02d", d+1) }

// benchPartDayOf is the day of the event at index i of rows: equal runs of
// the time-ordered events, as days are.
func benchPartDayOf(i, rows int64) int { return int(i * benchPartDays / rows) }

func benchPartFilter() []byte {
	return fmt.Appendf(nil, `{"eq": ["dt", %q]}`, benchPartDT(benchPartDay))
}

// benchPartRows is how many events the filter keeps.
func benchPartRows(rows int64) int64 {
	var n int64
	for i := range rows {
		if benchPartDayOf(i, rows) == benchPartDay {
			n++
		}
	}
	return n
}

// benchPartPrepare loads the events, each with its day as dt, into a table
// partitioned by dt (no compression, as filter/1pct), once for both
// workloads, and checks the filter's row count.
func benchPartPrepare(ctx context.Context, e *benchEnv) error {
	ev := e.eventData()
	if _, err := e.fg.DescribeTable(ctx, benchPartTable); err == nil {
		return nil // loaded by the other workload
	}
	spec := benchEventSpec(benchPartTable, "none")
	spec.Columns = append(append([]client.Column(nil), spec.Columns...), client.Column{Name: "dt", Type: "STRING", Nullable: new(false)})
	spec.PartitionKeys = []string{"dt"}
	if _, err := e.fg.CreateTable(ctx, spec, false); err != nil {
		return err
	}
	recs := benchWithDays(ev.recs, ev.rows)
	err := benchWrite(ctx, e.fg, benchPartTable, recs)
	release(recs)
	if err != nil {
		return err
	}
	_, err = benchScan(ctx, e.fg, client.ScanRequest{Table: benchPartTable, Filter: benchPartFilter()}, benchPartRows(ev.rows))
	return err
}

// benchWithDays returns the events with a dt column, the day of each row.
func benchWithDays(recs []arrow.RecordBatch, rows int64) []arrow.RecordBatch {
	out := make([]arrow.RecordBatch, len(recs))
	var i int64
	for k, rec := range recs {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		for range rec.NumRows() {
			b.Append(benchPartDT(benchPartDayOf(i, rows)))
			i++
		}
		dt := b.NewArray()
		b.Release()
		fields := append(append([]arrow.Field(nil), rec.Schema().Fields()...), arrow.Field{Name: "dt", Type: arrow.BinaryTypes.String})
		cols := append(append([]arrow.Array(nil), rec.Columns()...), dt)
		out[k] = array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
		dt.Release()
	}
	return out
}

func benchPartFullScan(ctx context.Context, e *benchEnv, _ int) (benchSample, error) {
	return benchScan(ctx, e.fg, client.ScanRequest{Table: benchPartTable}, e.eventData().rows)
}

// benchPartScan runs the filtered scan.
func benchPartScan(ctx context.Context, e *benchEnv, _ int) (benchSample, error) {
	return benchPartOneDay(ctx, e, client.ScanRequest{Table: benchPartTable, Filter: benchPartFilter()})
}

// benchPartNamedScan reads the same day by naming its partition, which
// leaves the server no filter to apply to its rows.
func benchPartNamedScan(ctx context.Context, e *benchEnv, _ int) (benchSample, error) {
	return benchPartOneDay(ctx, e, client.ScanRequest{Table: benchPartTable, Partitions: []string{benchPartDT(benchPartDay)}})
}

// benchPartOneDay runs a scan of the one day; its rows are the table's rows
// (the rows the scan covers), so that the ratio is the speed-up.
func benchPartOneDay(ctx context.Context, e *benchEnv, req client.ScanRequest) (benchSample, error) {
	ev := e.eventData()
	s, err := benchScan(ctx, e.fg, req, benchPartRows(ev.rows))
	s.rows = ev.rows
	return s, err
}

// benchPartNote returns a finish adding the log bytes the server read for
// one full scan and one scan of the day by oneDay.
func benchPartNote(oneDay func(context.Context, *benchEnv, int) (benchSample, error)) func(*benchEnv, *benchResult) {
	return func(e *benchEnv, r *benchResult) {
		ctx := context.Background()
		read := func(scan func(context.Context, *benchEnv, int) (benchSample, error)) int64 {
			before, err := e.srv.Engine().LogBytesRead(benchPartTable)
			if err == nil {
				_, err = scan(ctx, e, 0)
			}
			after, _ := e.srv.Engine().LogBytesRead(benchPartTable)
			if err != nil {
				return 0
			}
			return after - before
		}
		all, some := read(benchPartFullScan), read(oneDay)
		if all > 0 && some > 0 {
			r.Notes += fmt.Sprintf("; log bytes read %.2f MB vs %.2f MB unfiltered (%.1fx fewer)", float64(some)/1e6, float64(all)/1e6, float64(all)/float64(some))
		}
	}
}
