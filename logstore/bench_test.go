package logstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkAppend appends 2.6 MB frames beside raw pwrite+fsync of the same
// bytes in the same run: what the log adds to the disk's own cost.
func BenchmarkAppend(b *testing.B) {
	mem := memory.NewGoAllocator()
	rec := makeRecord(b, mem, 0, 100_000)
	defer rec.Release()
	enc := newEncoder(b, CodecNone, mem)
	frame := encode(b, enc, rec, Writer{}).bytes()
	b.Run("pwrite", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "f"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		var pos int64
		b.SetBytes(int64(len(frame)))
		for b.Loop() {
			if _, err := f.WriteAt(frame, pos); err != nil {
				b.Fatal(err)
			}
			pos += int64(len(frame))
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("log", func(b *testing.B) {
		tbl, err := Open(b.TempDir(), 1, Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer tbl.Close()
		b.SetBytes(int64(len(frame)))
		for b.Loop() {
			if _, err := tbl.Append([]Part{{Bucket: 0, Batch: encode(b, enc, rec, Writer{})}}, Writer{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeSmallFrames reads and decodes the id column of 200-row
// frames, as a follower of a busy table does: the per-frame and per-column
// costs, not the bytes, are what it measures.
func BenchmarkDecodeSmallFrames(b *testing.B) {
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		b.Run(codec.String(), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			tbl, err := Open(b.TempDir(), 1, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer tbl.Close()
			enc := newEncoder(b, codec, mem)
			const frames, rows = 500, 200
			for i := range frames {
				appendRows(b, tbl, enc, mem, 0, i*rows, rows, nil)
			}
			dec := NewDecoder(testSchema, mem)
			schema := arrow.NewSchema([]arrow.Field{testSchema.Field(0)}, nil)
			for b.Loop() {
				r, err := tbl.NewReader(0, 0, []int{0})
				if err != nil {
					b.Fatal(err)
				}
				for n := 0; n < frames; n++ {
					f, err := r.Next(tbl.HighWatermark(0))
					if err != nil || f == nil {
						b.Fatal(err, n)
					}
					rec, err := f.Record(dec, schema)
					if err != nil {
						b.Fatal(err)
					}
					rec.Release()
				}
				r.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*frames), "ns/frame")
		})
	}
}
