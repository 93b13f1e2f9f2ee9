// Package benchdata is the data of the benchmarks that fluxgate shares with
// its peers' benchmarks (fluxgate bench, bench/peers/*): deterministic record
// batches, built in memory before anything is timed, and the one way the
// lookup workloads send theirs. It times nothing.
package benchdata

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"

	"github.com/fluxgate-io/fluxgate/client"
)

// NarrowColumns are the 8 columns of the narrow event table: 4 BIGINT,
// 2 DOUBLE, 2 twelve-byte STRING, shaped like readings of devices.
var NarrowColumns = []client.Column{
	{Name: "ts", Type: "BIGINT"},     // epoch milliseconds, ascending
	{Name: "seq", Type: "BIGINT"},    // ascending
	{Name: "device", Type: "BIGINT"}, // Zipf over 100,000 devices
	{Name: "count", Type: "BIGINT"},  // small, skewed
	{Name: "value", Type: "DOUBLE"},  // a reading with 2 decimals
	{Name: "ratio", Type: "DOUBLE"},  // uniform in [0, 1)
	{Name: "site", Type: "STRING"},   // "site-NNNNNNN": 500 values, skewed
	{Name: "status", Type: "STRING"}, // "status-NNNNN": 6 values, skewed
}

// Narrow is the narrow event data: batches of one schema.
type Narrow struct {
	Schema *arrow.Schema
	Recs   []arrow.RecordBatch
	Rows   int64
	Bytes  int64 // Arrow column data, as util.TotalRecordSize counts it
}

// NewNarrow builds rows narrow events in batches of batchRows rows.
func NewNarrow(rows, batchRows int) *Narrow {
	schema, err := (&client.TableSpec{Columns: NarrowColumns}).ArrowSchema()
	if err != nil {
		panic(err) // the columns above are valid
	}
	rng := rand.New(rand.NewPCG(20261201, 19))
	devices := rand.NewZipf(rng, 1.1, 10, 99_999)
	sites := rand.NewZipf(rng, 1.2, 5, 499)
	statuses := rand.NewZipf(rng, 2, 1, 5)
	ts := int64(1_796_112_000_000) // 2026-12-01T08:00:00Z
	n := &Narrow{Schema: schema, Rows: int64(rows)}
	for from := 0; from < rows; from += batchRows {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := from; i < min(from+batchRows, rows); i++ {
			ts += int64(rng.IntN(3))
			b.Field(0).(*array.Int64Builder).Append(ts)
			b.Field(1).(*array.Int64Builder).Append(int64(i))
			b.Field(2).(*array.Int64Builder).Append(int64(devices.Uint64()))
			b.Field(3).(*array.Int64Builder).Append(int64(rng.IntN(4) * rng.IntN(4)))
			b.Field(4).(*array.Float64Builder).Append(math.Round((20+rng.NormFloat64()*5)*100) / 100)
			b.Field(5).(*array.Float64Builder).Append(rng.Float64())
			b.Field(6).(*array.StringBuilder).Append(fmt.Sprintf("site-%07d", sites.Uint64()))
			b.Field(7).(*array.StringBuilder).Append(fmt.Sprintf("status-%05d", statuses.Uint64()))
		}
		rec := b.NewRecordBatch()
		b.Release()
		n.Recs = append(n.Recs, rec)
		n.Bytes += util.TotalRecordSize(rec)
	}
	return n
}

// Release releases the batches.
func (n *Narrow) Release() {
	for _, r := range n.Recs {
		r.Release()
	}
	n.Recs = nil
}

// KeyValue is the value stored under key k by the point-get workloads.
func KeyValue(k int64) string { return fmt.Sprintf("value-%06d", k%1_000_000) }
