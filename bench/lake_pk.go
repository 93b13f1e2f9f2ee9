package bench

// The primary-key tiering workload of fluxgate bench: a round in which a
// tenth of the rows update keys already in the lake (position deletes)
// against a round of as many rows that are all new keys.

import (
	"context"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow/util"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/client"
)

// benchPKTierRows is the largest round of the workload: every key of a
// primary-key table is also in the lake's key index.
const benchPKTierRows = 500_000

// benchPKTierColumns and benchPKTierSchema are the table of the lake
// primary-key and compaction workloads, as created and as written.
var benchPKTierColumns = []client.Column{{Name: "id", Type: "BIGINT"}, {Name: "user", Type: "STRING"}, {Name: "amount", Type: "DOUBLE"}, {Name: "qty", Type: "INT"}}

var benchPKTierSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "user", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
}, nil)

// benchPKTier returns a workload run: a new lake-enabled primary-key table
// gets n rows, tiered (untimed), then n more rows, of which one in
// updateEvery updates an earlier key (0: none), and their round is timed.
func benchPKTier(updateEvery int) func(ctx context.Context, e *benchEnv, rep int) (benchSample, error) {
	return func(ctx context.Context, e *benchEnv, rep int) (benchSample, error) {
		n := min(e.cfg.rows, benchPKTierRows)
		name := fmt.Sprintf("fluss.bench_pk_tier_%d_%d", updateEvery, rep)
		_, err := e.fg.CreateTable(ctx, client.TableSpec{
			Table: name, PrimaryKey: []string{"id"},
			Columns: benchPKTierColumns,
			Options: map[string]string{"bucket.num": "4", "table.datalake.enabled": "true", "table.datalake.freshness": "1h"},
		}, false)
		if err != nil {
			return benchSample{}, err
		}
		defer e.fg.DropTable(context.WithoutCancel(ctx), name, true)
		first := benchPKRecords(n, e.cfg.batchRows, func(i int) int64 { return int64(i) })
		err = benchWrite(ctx, e.fg, name, first)
		release(first)
		if err == nil {
			_, err = e.fg.TierNow(ctx, name)
		}
		if err != nil {
			return benchSample{}, err
		}
		second := benchPKRecords(n, e.cfg.batchRows, func(i int) int64 {
			if updateEvery > 0 && i%updateEvery == 0 {
				return int64(i) // an earlier key
			}
			return int64(n + i)
		})
		var bytes int64
		for _, r := range second {
			bytes += util.TotalRecordSize(r)
		}
		err = benchWrite(ctx, e.fg, name, second)
		release(second)
		if err != nil {
			return benchSample{}, err
		}
		start := time.Now()
		if _, err := e.fg.TierNow(ctx, name); err != nil {
			return benchSample{}, err
		}
		return benchSample{rows: int64(n), bytes: bytes, d: time.Since(start)}, nil
	}
}

// benchPKRecords makes n rows of benchPKTierSchema, key(i) the id of row i.
func benchPKRecords(n, batchRows int, key func(i int) int64) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	b := array.NewRecordBuilder(memory.DefaultAllocator, benchPKTierSchema)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(key(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("user-%d", i%5000))
		b.Field(2).(*array.Float64Builder).Append(float64(i) / 100)
		b.Field(3).(*array.Int32Builder).Append(int32(i % 97))
		if (i+1)%batchRows == 0 || i == n-1 {
			out = append(out, b.NewRecordBatch())
		}
	}
	return out
}

func release(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}
