package logstore

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// BenchmarkAppend appends 2.6 MB frames beside raw pwrite+fsync of the same
// bytes in the same run: what the log adds to the disk's own cost.
func BenchmarkAppend(b *testing.B) {
	mem := memtest.Allocator(b)
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
			mem := memtest.Allocator(b)
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

// BenchmarkRead reads a bucket of 16 frames of 16,384 rows × 20 BIGINT and
// DOUBLE columns (42 MB), whole and 2 of the 20 columns, decoding every
// frame: what a scan costs the store, checksums included.
func BenchmarkRead(b *testing.B) {
	mem := memtest.Allocator(b)
	var fields []arrow.Field
	for i := range 20 {
		dt := arrow.DataType(arrow.PrimitiveTypes.Int64)
		if i%2 == 1 {
			dt = arrow.PrimitiveTypes.Float64
		}
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%02d", i), Type: dt})
	}
	schema := arrow.NewSchema(fields, nil)
	rb := array.NewRecordBuilder(mem, schema)
	x := uint64(1)
	for range 16 << 10 {
		for i := range fields {
			x = x*6364136223846793005 + 1442695040888963407 // poorly compressible
			switch fb := rb.Field(i).(type) {
			case *array.Int64Builder:
				fb.Append(int64(x))
			case *array.Float64Builder:
				fb.Append(float64(x>>11) / (1 << 53))
			}
		}
	}
	rec := rb.NewRecordBatch()
	rb.Release()
	defer rec.Release()
	tbl, err := Open(b.TempDir(), 1, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer tbl.Close()
	enc, err := NewEncoder(schema, CodecNone, 0, mem)
	if err != nil {
		b.Fatal(err)
	}
	const frames = 16
	for range frames {
		batch, err := enc.Encode(rec, BatchMeta{SchemaID: 1, WriterSeq: -1})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tbl.Append([]Part{{Bucket: 0, Batch: batch}}, Writer{}); err != nil {
			b.Fatal(err)
		}
	}
	dec := NewDecoder(schema, mem)
	for _, c := range []struct {
		name string
		cols []int
	}{{"all", nil}, {"2of20", []int{0, 7}}} {
		b.Run(c.name, func(b *testing.B) {
			read := schema
			if c.cols != nil {
				read = arrow.NewSchema([]arrow.Field{fields[c.cols[0]], fields[c.cols[1]]}, nil)
			}
			b.SetBytes(int64(frames) * rec.NumRows() * int64(len(read.Fields())) * 8)
			for b.Loop() {
				r, err := tbl.NewReader(0, 0, c.cols)
				if err != nil {
					b.Fatal(err)
				}
				for {
					f, err := r.Next(tbl.HighWatermark(0))
					if err != nil {
						b.Fatal(err)
					}
					if f == nil {
						break
					}
					out, err := f.Record(dec, read)
					if err != nil {
						b.Fatal(err)
					}
					out.Release()
				}
				r.Close()
			}
		})
	}
}

// BenchmarkAppendHotBucket appends 200-row frames to one bucket of a
// 64-bucket log, each waited for (sync: an fsync each) or 64 at a time
// (async: the CPU path): what reaching segment files through the file cache
// costs a hot bucket. Compare with the same benchmark before the cache.
func BenchmarkAppendHotBucket(b *testing.B) {
	for _, mode := range []string{"sync", "async"} {
		b.Run(mode, func(b *testing.B) {
			mem := memtest.Allocator(b)
			rec := makeRecord(b, mem, 0, 200)
			defer rec.Release()
			enc := newEncoder(b, CodecNone, mem)
			tbl, err := Open(b.TempDir(), 64, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer tbl.Close()
			var pending []*Pending
			wait := func() {
				for _, p := range pending {
					if _, err := p.Wait(); err != nil {
						b.Fatal(err)
					}
				}
				pending = pending[:0]
			}
			for b.Loop() {
				p, err := tbl.AppendAsync([]Part{{Bucket: 0, Batch: encode(b, enc, rec, Writer{})}}, Writer{})
				if err != nil {
					b.Fatal(err)
				}
				if pending = append(pending, p); mode == "sync" || len(pending) == 64 {
					wait()
				}
			}
			wait()
		})
	}
}

// BenchmarkFileCache reads 4 KiB at a time from a file in the page cache,
// directly and through the file cache, in the same run: what an operation
// pays for reaching its file through the cache.
func BenchmarkFileCache(b *testing.B) {
	path := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 4<<10)
	read := func(b *testing.B, f io.ReaderAt) {
		b.SetBytes(int64(len(buf)))
		i := 0
		for b.Loop() {
			if _, err := f.ReadAt(buf, int64(i%256)*int64(len(buf))); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
	b.Run("file", func(b *testing.B) {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		read(b, f)
	})
	b.Run("cached", func(b *testing.B) {
		cf, err := openCached(NewFileCache(8), vfs.Default, path, true)
		if err != nil {
			b.Fatal(err)
		}
		defer cf.Close()
		read(b, cf)
	})
}
