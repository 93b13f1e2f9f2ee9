package engine

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// BenchmarkPartitionPruning scans a table of 30 day partitions whole and
// filtered to one day, in the same run: the ratio of bytes read and of time
// is the figure (docs/benchmarks.md, "Partition pruning"); nothing is
// asserted.
func BenchmarkPartitionPruning(b *testing.B) {
	const days, rowsPerDay = 30, 20_000
	e := openBench(b)
	if _, err := e.CreateTable(b.Context(), protocol.TableSpec{
		Table:         "events",
		Columns:       []protocol.Column{{Name: "id", Type: "BIGINT"}, {Name: "dt", Type: "STRING"}, {Name: "payload", Type: "STRING"}},
		PartitionKeys: []string{"dt"},
		Options:       map[string]string{"bucket.num": "2", "bucket.key": "id"},
	}, false); err != nil {
		b.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "dt", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	var recs []arrow.RecordBatch
	for d := range days {
		rb := array.NewRecordBuilder(memtest.Allocator(b), schema)
		for i := range rowsPerDay {
			rb.Field(0).(*array.Int64Builder).Append(int64(d*rowsPerDay + i))
			rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("202612%02d", d+1))
			rb.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("event %d of day %d with some payload", i, d))
		}
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	writeAll(b, e, "events", recs)
	for _, r := range recs {
		r.Release()
	}
	scan := func(b *testing.B, req protocol.ScanRequest) {
		before, err := e.LogBytesRead("events")
		if err != nil {
			b.Fatal(err)
		}
		rows := int64(0)
		for b.Loop() {
			plan, err := e.PlanScan(b.Context(), req)
			if err != nil {
				b.Fatal(err)
			}
			for _, tk := range plan.Tickets {
				rs, err := e.OpenRead(tk)
				if err != nil {
					b.Fatal(err)
				}
				if err := rs.Run(b.Context(), func(rec arrow.RecordBatch, _ protocol.BatchMeta) error {
					rows += rec.NumRows()
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
		}
		after, _ := e.LogBytesRead("events")
		b.ReportMetric(float64(after-before)/float64(b.N), "logbytes/op")
		b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
	}
	b.Run("full", func(b *testing.B) { scan(b, protocol.ScanRequest{Table: "events"}) })
	b.Run("one-day", func(b *testing.B) {
		scan(b, protocol.ScanRequest{Table: "events", Filter: []byte(`{"eq": ["dt", "20261215"]}`)})
	})
}
