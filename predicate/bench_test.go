package predicate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/framestats"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

var benchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "sku", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
}, nil)

// benchBatch returns 64K rows of benchSchema: ascending ids, random prices,
// 12-byte skus and timestamps, 1% nulls outside the id.
func benchBatch(mem memory.Allocator) arrow.RecordBatch {
	const rows = 64 << 10
	r := rand.New(rand.NewPCG(1, 2))
	bld := array.NewRecordBuilder(mem, benchSchema)
	defer bld.Release()
	ids := bld.Field(0).(*array.Int64Builder)
	prices := bld.Field(1).(*array.Float64Builder)
	skus := bld.Field(2).(*array.StringBuilder)
	tss := bld.Field(3).(*array.TimestampBuilder)
	for i := range rows {
		ids.Append(int64(i))
		if r.IntN(100) == 0 {
			prices.AppendNull()
			skus.AppendNull()
			tss.AppendNull()
			continue
		}
		prices.Append(r.Float64() * 1000)
		skus.Append(fmt.Sprintf("sku-%08d", r.IntN(1e8)))
		tss.Append(arrow.Timestamp(1.7e15 + r.Int64N(1e12)))
	}
	return bld.NewRecordBatch()
}

func BenchmarkComputeStats(b *testing.B) {
	rec := benchBatch(memtest.Allocator(b))
	defer rec.Release()
	b.SetBytes(rec.NumRows() * 4) // per cell: MB/s reads as million cells per second
	b.ReportAllocs()
	for b.Loop() {
		framestats.Compute(rec)
	}
}

func BenchmarkDecodeStats(b *testing.B) {
	rec := benchBatch(memtest.Allocator(b))
	defer rec.Release()
	block, types := framestats.Compute(rec), arrowTypes(benchSchema)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := framestats.Decode(block, types); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFilter(b *testing.B) {
	for _, bc := range []struct{ name, filter string }{
		{"gt", `{"gt": ["price", 500]}`},
		{"range_and_in", `{"and": [{"ge": ["id", 1000]}, {"lt": ["id", 60000]}, {"in": ["sku", ["sku-00000001", "sku-12345678", "sku-99999999"]]}]}`},
		{"or_not_starts_with", `{"or": [{"not": {"starts_with": ["sku", "sku-1"]}}, {"is_null": "ts"}, {"gt": ["ts", "2023-11-14T22:20:00"]}]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			mem := memtest.Allocator(b)
			rec := benchBatch(mem)
			defer rec.Release()
			e, err := Parse([]byte(bc.filter))
			if err != nil {
				b.Fatal(err)
			}
			bound, err := Bind(e, benchSchema)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.SetBytes(rec.NumRows()) // MB/s reads as million rows per second
			b.ReportAllocs()
			for b.Loop() {
				mask, err := bound.Filter(ctx, mem, rec.Column, int(rec.NumRows()))
				if err != nil {
					b.Fatal(err)
				}
				mask.Release()
			}
		})
	}
}

func BenchmarkMayMatch(b *testing.B) {
	rec := benchBatch(memtest.Allocator(b))
	defer rec.Release()
	stats, err := framestats.Decode(framestats.Compute(rec), arrowTypes(benchSchema))
	if err != nil {
		b.Fatal(err)
	}
	e, err := Parse([]byte(`{"and": [{"ge": ["id", 100000]}, {"or": [{"starts_with": ["sku", "sku-1"]}, {"gt": ["price", 500]}]}]}`))
	if err != nil {
		b.Fatal(err)
	}
	bound, err := Bind(e, benchSchema)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if bound.MayMatch(rec.NumRows(), stats) {
			b.Fatal("may match")
		}
	}
}
