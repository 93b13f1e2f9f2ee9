package logstore

import (
	"fmt"
	"testing"

	"github.com/fluxgate-io/fluxgate/bench/benchdata"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// BenchmarkZstdLevels encodes the peer benchmarks' narrow data (200,000 rows
// in 8,192-row batches) at the ZSTD levels a table may choose, with and
// without the retry at level 7 of what a level leaves raw, and decodes it
// back: the append CPU, the scan CPU and the bytes stored of each (metric
// stored/raw), beside LZ4 and no compression in the same run.
//
//	go test -run xxx -bench ZstdLevels -benchtime 5x -count 3 ./logstore/
func BenchmarkZstdLevels(b *testing.B) {
	data := benchdata.NewNarrow(200_000, 8192)
	defer data.Release()
	mem := memtest.Allocator(b)
	for _, v := range []struct {
		name  string
		codec Codec
		level int
		retry bool
	}{
		{"none", CodecNone, 0, false},
		{"lz4", CodecLZ4, 0, false},
		{"zstd1", CodecZstd, 1, false},
		{"zstd1+retry", CodecZstd, 1, true},
		{"zstd3", CodecZstd, 3, false},
		{"zstd3+retry", CodecZstd, 3, true}, // the table default
		{"zstd7", CodecZstd, 7, false},
	} {
		enc, err := NewEncoder(data.Schema, v.codec, max(v.level, 1), mem)
		if err != nil {
			b.Fatal(err)
		}
		if !v.retry {
			enc.comp.retry = nil
		}
		encodeAll := func(b *testing.B) ([]*Batch, int) {
			var out []*Batch
			size := 0
			for _, rec := range data.Recs {
				bt, err := enc.Encode(rec, BatchMeta{SchemaID: 1, WriterSeq: -1})
				if err != nil {
					b.Fatal(err)
				}
				out, size = append(out, bt), size+bt.Size()
			}
			return out, size
		}
		b.Run(fmt.Sprintf("encode/%s", v.name), func(b *testing.B) {
			size := 0
			for b.Loop() {
				var batches []*Batch
				batches, size = encodeAll(b)
				for _, bt := range batches {
					bt.Release()
				}
			}
			b.ReportMetric(float64(data.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(size)/float64(data.Bytes), "stored/raw")
		})
		b.Run(fmt.Sprintf("decode/%s", v.name), func(b *testing.B) {
			tbl, err := Open(b.TempDir(), 1, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer tbl.Close()
			batches, _ := encodeAll(b)
			for _, bt := range batches {
				if _, err := tbl.Append([]Part{{Bucket: 0, Batch: bt}}, Writer{}); err != nil {
					b.Fatal(err)
				}
			}
			dec := NewDecoder(data.Schema, mem)
			for b.Loop() {
				rows := 0
				eachFrame(b, tbl, func(f *Frame) {
					rec, err := f.Record(dec, data.Schema)
					if err != nil {
						b.Fatal(err)
					}
					rows += int(rec.NumRows())
					rec.Release()
				})
				if rows != int(data.Rows) {
					b.Fatalf("decoded %d rows, want %d", rows, data.Rows)
				}
			}
			b.ReportMetric(float64(data.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
