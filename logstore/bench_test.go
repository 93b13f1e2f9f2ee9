package logstore

import (
	"os"
	"path/filepath"
	"testing"

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
