package logstore

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/errs"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

func makeRecord(t testing.TB, mem memory.Allocator, from, n int) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, testSchema)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%d", i))
		b.Field(2).(*array.Float64Builder).Append(float64(i) / 2)
	}
	return b.NewRecordBatch()
}

func newEncoder(t testing.TB, codec Codec, mem memory.Allocator) *Encoder {
	t.Helper()
	enc, err := NewEncoder(testSchema, codec, 3, mem)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

func encode(t testing.TB, enc *Encoder, rec arrow.RecordBatch, w Writer) *Batch {
	t.Helper()
	b, err := enc.Encode(rec, BatchMeta{SchemaID: 1, WriterID: w.ID, WriterSeq: w.Seq})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkedMem returns an allocator that the test's end checks for leaks.
func checkedMem(t testing.TB) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// mustOpen opens a table log or fails the test.
func mustOpen(t testing.TB, dir string, buckets int, opts Options) *Table {
	t.Helper()
	tbl, err := Open(dir, buckets, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// appendRows appends one batch of ids [from, from+n) to bucket, with an
// optional statistics block.
func appendRows(t testing.TB, tbl *Table, enc *Encoder, mem memory.Allocator, bucket, from, n int, stats []byte) Result {
	t.Helper()
	rec := makeRecord(t, mem, from, n)
	defer rec.Release()
	b, err := enc.Encode(rec, BatchMeta{SchemaID: 1, WriterSeq: -1, Stats: stats})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tbl.Append([]Part{{Bucket: bucket, Batch: b}}, Writer{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// eachFrame calls fn with each frame of bucket 0, all columns, up to the
// high watermark.
func eachFrame(t testing.TB, tbl *Table, fn func(*Frame)) {
	t.Helper()
	eachFrameOf(t, tbl, 0, 0, nil, fn)
}

// eachFrameOf calls fn with each frame of bucket from start, columns cols
// (nil: all), up to the high watermark.
func eachFrameOf(t testing.TB, tbl *Table, bucket int, start int64, cols []int, fn func(*Frame)) {
	t.Helper()
	r, err := tbl.NewReader(bucket, start, cols)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		f, err := r.Next(tbl.HighWatermark(bucket))
		if err != nil {
			t.Fatal(err)
		}
		if f == nil {
			return
		}
		fn(f)
	}
}

// writeSegment makes dir the directory of a one-bucket table whose log is
// one segment holding data.
func writeSegment(t testing.TB, dir string, data []byte) {
	t.Helper()
	logDir := filepath.Join(dir, "0", "log")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, segmentName(0)+".log"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readAll reads a bucket from start to the high watermark and returns the ids.
func readAll(t *testing.T, tbl *Table, bucket int, start int64, cols []int, mem memory.Allocator) []int64 {
	t.Helper()
	dec := NewDecoder(testSchema, mem)
	sc := testSchema
	if cols != nil {
		var fields []arrow.Field
		for _, c := range cols {
			fields = append(fields, testSchema.Field(c))
		}
		sc = arrow.NewSchema(fields, nil)
	}
	var ids []int64
	eachFrameOf(t, tbl, bucket, start, cols, func(f *Frame) {
		rec, err := f.Record(dec, sc)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Field(0).Name == "id" {
			ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		}
		rec.Release()
	})
	return ids
}

func TestAppendReadReopen(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecLZ4, CodecZstd} {
		t.Run(fmt.Sprint(codec), func(t *testing.T) {
			mem := checkedMem(t)
			dir := t.TempDir()
			tbl := mustOpen(t, dir, 2, Options{SegmentBytes: 4 << 10})
			enc := newEncoder(t, codec, mem)
			var want []int64
			for i := 0; i < 20; i++ {
				rec := makeRecord(t, mem, i*10, 10)
				res, err := tbl.Append([]Part{{Bucket: 1, Batch: encode(t, enc, rec, Writer{})}}, Writer{})
				rec.Release()
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Ends[1]; got != int64((i+1)*10) {
					t.Fatalf("end offset after batch %d = %d, want %d", i, got, (i+1)*10)
				}
				for j := i * 10; j < i*10+10; j++ {
					want = append(want, int64(j))
				}
			}
			segs, _ := listSegments(vfs.Default, filepath.Join(dir, "1", "log"))
			if len(segs) < 2 {
				t.Fatalf("expected the log to roll, got %d segments", len(segs))
			}
			check := func(tbl *Table) {
				if got := readAll(t, tbl, 1, 0, nil, mem); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("read %v, want %v", got, want)
				}
				// Starting in the middle of a frame returns that frame whole.
				if got := readAll(t, tbl, 1, 105, nil, mem); got[0] != 100 || len(got) != 100 {
					t.Fatalf("read from 105: first %d, %d rows", got[0], len(got))
				}
			}
			check(tbl)
			if err := tbl.Close(); err != nil {
				t.Fatal(err)
			}
			tbl = mustOpen(t, dir, 2, Options{SegmentBytes: 4 << 10})
			defer tbl.Close()
			check(tbl)
			if hw := tbl.HighWatermark(1); hw != 200 {
				t.Fatalf("high watermark after reopen %d, want 200", hw)
			}
		})
	}
}

func TestTornTailIsCut(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	tbl := mustOpen(t, dir, 1, Options{})
	enc := newEncoder(t, CodecNone, mem)
	for i := range 3 {
		appendRows(t, tbl, enc, mem, 0, i*10, 10, nil)
	}
	crash(tbl) // no clean close
	path := filepath.Join(dir, "0", "log", segmentName(0)+".log")
	st, _ := os.Stat(path)
	// Tear the last frame and corrupt nothing else.
	if err := os.Truncate(path, st.Size()-7); err != nil {
		t.Fatal(err)
	}
	tbl = mustOpen(t, dir, 1, Options{})
	defer tbl.Close()
	if got := readAll(t, tbl, 0, 0, nil, mem); len(got) != 20 {
		t.Fatalf("after a torn tail read %d rows, want 20", len(got))
	}
	if hw := tbl.HighWatermark(0); hw != 20 {
		t.Fatalf("high watermark %d, want 20", hw)
	}
}

func TestIncompleteMultiBucketAppendIsCut(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	tbl := mustOpen(t, dir, 2, Options{})
	enc := newEncoder(t, CodecNone, mem)
	rec := makeRecord(t, mem, 0, 10)
	defer rec.Release()
	parts := func() []Part {
		return []Part{{Bucket: 0, Batch: encode(t, enc, rec, Writer{})}, {Bucket: 1, Batch: encode(t, enc, rec, Writer{})}}
	}
	if _, err := tbl.Append(parts(), Writer{}); err != nil {
		t.Fatal(err)
	}
	// Simulate a crash after bucket 0's part of the second append was written.
	p := parts()
	tbl.appendMu.Lock()
	tbl.lastTxn++
	if err := tbl.appendLocked(p[0], tbl.lastTxn, 2, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	tbl.appendMu.Unlock()
	p[1].Batch.Release()
	crash(tbl)

	tbl = mustOpen(t, dir, 2, Options{})
	defer tbl.Close()
	for b := 0; b < 2; b++ {
		if got := readAll(t, tbl, b, 0, nil, mem); len(got) != 10 {
			t.Fatalf("bucket %d has %d rows after recovery, want 10", b, len(got))
		}
	}
}

func TestIdempotentWriterAcrossRestart(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	tbl := mustOpen(t, dir, 1, Options{})
	enc := newEncoder(t, CodecNone, mem)
	rec := makeRecord(t, mem, 0, 10)
	defer rec.Release()
	w := Writer{ID: "w1", Seq: 0}
	first, err := tbl.Append([]Part{{Bucket: 0, Batch: encode(t, enc, rec, w)}}, w)
	if err != nil {
		t.Fatal(err)
	}
	crash(tbl) // no writer snapshot
	tbl = mustOpen(t, dir, 1, Options{})
	defer tbl.Close()
	again, err := tbl.Append([]Part{{Bucket: 0, Batch: encode(t, enc, rec, w)}}, w)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Duplicate || again.Ends[0] != first.Ends[0] {
		t.Fatalf("retry after restart: %+v, want duplicate with ends %v", again, first.Ends)
	}
	if got := readAll(t, tbl, 0, 0, nil, mem); len(got) != 10 {
		t.Fatalf("%d rows, want 10 (the retry must not apply twice)", len(got))
	}
	gap := Writer{ID: "w1", Seq: 5}
	if _, err := tbl.Append([]Part{{Bucket: 0, Batch: encode(t, enc, rec, gap)}}, gap); err == nil {
		t.Fatal("a sequence gap was accepted")
	}
}

func TestProjectionReadsOnlyProjectedColumns(t *testing.T) {
	mem := checkedMem(t)
	tbl := mustOpen(t, t.TempDir(), 1, Options{})
	defer tbl.Close()
	enc := newEncoder(t, CodecNone, mem)
	for i := range 4 {
		appendRows(t, tbl, enc, mem, 0, i*50000, 50000, nil)
	}
	before := tbl.BytesRead()
	all := readAll(t, tbl, 0, 0, nil, mem)
	full := tbl.BytesRead() - before
	before = tbl.BytesRead()
	ids := readAll(t, tbl, 0, 0, []int{0}, mem)
	proj := tbl.BytesRead() - before
	if len(all) != 200000 || len(ids) != 200000 {
		t.Fatalf("read %d and %d rows, want 200000", len(all), len(ids))
	}
	// id is 8 of the ~30 bytes per row (id, "name-NNNNNN" with offsets, score).
	if proj*2 > full {
		t.Fatalf("projection read %d bytes, the full scan %d: want less than half", proj, full)
	}
}

func TestTailWakesReader(t *testing.T) {
	mem := checkedMem(t)
	tbl := mustOpen(t, t.TempDir(), 1, Options{})
	defer tbl.Close()
	r, err := tbl.NewReader(0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	woke := make(chan error, 1)
	go func() {
		defer wg.Done()
		woke <- r.Wait(t.Context())
	}()
	enc := newEncoder(t, CodecNone, mem)
	rec := makeRecord(t, mem, 0, 1)
	defer rec.Release()
	if _, err := tbl.Append([]Part{{Bucket: 0, Batch: encode(t, enc, rec, Writer{})}}, Writer{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-woke:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reader was not woken by the append")
	}
	wg.Wait()
}

func TestExpireRemovesOldSegments(t *testing.T) {
	mem := checkedMem(t)
	now := time.Now()
	clock := func() time.Time { return now }
	tbl := mustOpen(t, t.TempDir(), 1, Options{SegmentBytes: 2 << 10, Now: clock})
	defer tbl.Close()
	enc := newEncoder(t, CodecNone, mem)
	for i := range 10 {
		appendRows(t, tbl, enc, mem, 0, i*10, 10, nil)
	}
	if n, _ := tbl.Expire(time.Hour, nil); n != 0 {
		t.Fatalf("expired %d fresh segments", n)
	}
	now = now.Add(2 * time.Hour)
	// Segments at or above what keep names stay, however old.
	if n, _ := tbl.Expire(time.Hour, func(int) int64 { return 0 }); n != 0 {
		t.Fatalf("expired %d segments that keep retains", n)
	}
	if n, _ := tbl.Expire(time.Hour, func(int) int64 { return 30 }); n == 0 || tbl.EarliestOffset(0) > 30 {
		t.Fatalf("with keep 30: expired %d segments, earliest offset %d; want some gone and offset 30 kept", n, tbl.EarliestOffset(0))
	}
	n, err := tbl.Expire(time.Hour, nil)
	if err != nil || n == 0 {
		t.Fatalf("expired %d segments (%v), want some", n, err)
	}
	first := tbl.EarliestOffset(0)
	if first == 0 {
		t.Fatal("earliest offset did not move")
	}
	if _, err := tbl.NewReader(0, 0, nil); err == nil {
		t.Fatal("reading below the earliest offset succeeded")
	}
	if got := readAll(t, tbl, 0, first, nil, mem); int64(len(got)) != 100-first {
		t.Fatalf("read %d rows from %d, want %d", len(got), first, 100-first)
	}
}

// A skip function sees each frame's statistics block and, when it rules the
// frame out, the frame's columns are not read.
func TestSkipByStatistics(t *testing.T) {
	mem := checkedMem(t)
	tbl := mustOpen(t, t.TempDir(), 1, Options{})
	defer tbl.Close()
	enc := newEncoder(t, CodecNone, mem)
	for i := range 4 {
		appendRows(t, tbl, enc, mem, 0, i*50000, 50000, []byte{byte(i)})
	}
	r, err := tbl.NewReader(0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SkipIf(func(stats []byte, rows int) bool { return stats[0] != 2 || rows != 50000 })
	before := tbl.BytesRead()
	var read, skipped int
	for {
		f, err := r.Next(tbl.HighWatermark(0))
		if err != nil {
			t.Fatal(err)
		}
		if f == nil {
			break
		}
		if f.Skipped {
			skipped++
			continue
		}
		read++
		if f.BaseOffset != 100000 || f.Stats[0] != 2 {
			t.Fatalf("read frame at %d with stats %v", f.BaseOffset, f.Stats)
		}
	}
	if read != 1 || skipped != 3 || r.Offset() != 200000 {
		t.Fatalf("read %d, skipped %d, offset %d", read, skipped, r.Offset())
	}
	// One frame's columns (~1.5 MB) plus four small heads.
	if n := tbl.BytesRead() - before; n > 2_000_000 {
		t.Fatalf("read %d bytes for one frame of four", n)
	}
}

// A sealed segment whose summary the skip function rules out is passed over
// whole, also after a reopen.
func TestSkipWholeSegments(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	// The "statistics" of a frame is its largest id's thousand; the summary
	// keeps the largest.
	opts := Options{SegmentBytes: 64 << 10, Summarize: func(a, b []byte) []byte { return []byte{max(a[0], b[0])} }}
	tbl := mustOpen(t, dir, 1, opts)
	enc := newEncoder(t, CodecNone, mem)
	for i := range 40 {
		appendRows(t, tbl, enc, mem, 0, i*1000, 1000, []byte{byte(i)})
	}
	scan := func(tbl *Table) (segments, frames int) {
		r, err := tbl.NewReader(0, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		r.SkipIf(func(stats []byte, rows int) bool { return stats[0] < 35 }) // ids from 35000 on
		for {
			f, err := r.Next(tbl.HighWatermark(0))
			if err != nil {
				t.Fatal(err)
			}
			if f == nil {
				return
			}
			switch {
			case f.Skipped && f.Stats == nil && f.NextOffset-f.BaseOffset > 1000:
				segments++
			case !f.Skipped:
				frames++
			}
		}
	}
	check := func(tbl *Table) {
		segs, frames := scan(tbl)
		if segs == 0 || frames != 5 {
			t.Fatalf("skipped %d whole segments and read %d frames; want some segments skipped and the 5 last frames read", segs, frames)
		}
	}
	check(tbl)
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	tbl = mustOpen(t, dir, 1, opts)
	defer tbl.Close()
	check(tbl)
}

// crash leaves the table as a killed process would once its queued frames
// reached the page cache: nothing synced, no writer snapshot, files closed.
func crash(tbl *Table) {
	tbl.appendMu.Lock()
	defer tbl.appendMu.Unlock()
	tbl.frames.wait(tbl.frames.queued)
	tbl.frames.stop()
	tbl.closeFiles()
}

// A ZSTD column body over 2 MiB is compressed in 1 MiB pieces, in parallel,
// each its own ZSTD frame; the frame stores them as one body that reads back
// whole.
func TestLargeZstdColumnCompressedInPieces(t *testing.T) {
	mem := checkedMem(t)
	tbl := mustOpen(t, t.TempDir(), 1, Options{})
	defer tbl.Close()
	enc := newEncoder(t, CodecZstd, mem)
	const rows = 400_000 // 3.2 MB of ids, and more of names
	rec := makeRecord(t, mem, 0, rows)
	defer rec.Release()
	b := encode(t, enc, rec, Writer{})
	if ids := len(enc.columns[0].body[0]); ids < 3*zstdChunkBytes {
		t.Fatalf("the id column is %d bytes, too small to be cut", ids)
	}
	if enc.columns[0].rawLen == 0 || enc.columns[0].storedLen() >= enc.columns[0].bodyLen/2 {
		t.Fatalf("the id column is stored %d of %d bytes", enc.columns[0].storedLen(), enc.columns[0].bodyLen)
	}
	if _, err := tbl.Append([]Part{{Bucket: 0, Batch: b}}, Writer{}); err != nil {
		t.Fatal(err)
	}
	ids := readAll(t, tbl, 0, 0, nil, mem)
	if len(ids) != rows {
		t.Fatalf("read %d rows, want %d", len(ids), rows)
	}
	for i, id := range ids {
		if id != int64(i) {
			t.Fatalf("row %d has id %d", i, id)
		}
	}
}

// A frame that cannot be written fails its append's wait, and the log takes
// no more appends: nothing after the hole may become durable.
func TestFailedFrameWriteBreaksTheLog(t *testing.T) {
	mem := checkedMem(t)
	tbl := mustOpen(t, t.TempDir(), 1, Options{})
	enc := newEncoder(t, CodecNone, mem)
	rec := makeRecord(t, mem, 0, 10)
	defer rec.Release()
	if _, err := tbl.Append([]Part{{Bucket: 0, Batch: encode(t, enc, rec, Writer{})}}, Writer{}); err != nil {
		t.Fatal(err)
	}
	tbl.buckets[0].active().f.Close() // the disk goes away under the writer
	if _, err := tbl.Append([]Part{{Bucket: 0, Batch: encode(t, enc, rec, Writer{})}}, Writer{}); errs.KindOf(err) != errs.Unavailable {
		t.Fatalf("append whose frame cannot be written: %v, want Unavailable", err)
	}
	if _, err := tbl.AppendAsync([]Part{{Bucket: 0, Batch: encode(t, enc, rec, Writer{})}}, Writer{}); errs.KindOf(err) != errs.Unavailable {
		t.Fatalf("append after the failure: %v, want Unavailable", err)
	}
	if hw := tbl.HighWatermark(0); hw != 10 {
		t.Fatalf("high watermark %d, want 10: only the first append is durable", hw)
	}
	tbl.Close()
}

// oldSegments are segments in testdata of two frames each, ids 0 to 3099,
// written before columns were compressed by Arrow buffer: ZSTD bodies
// compressed whole, and LZ4 bodies as one LZ4 block each.
var oldSegments = map[Codec]string{CodecZstd: "zstd-whole-bodies.log", CodecLZ4: "lz4-block-bodies.log"}

// openOldSegment opens a table of one bucket made of the testdata segment.
func openOldSegment(t *testing.T, name string) *Table {
	t.Helper()
	old, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeSegment(t, dir, old)
	return mustOpen(t, dir, 1, Options{})
}

// Frames written before columns were compressed by Arrow buffer still read.
func TestWholeBodyFramesStillRead(t *testing.T) {
	for codec, name := range oldSegments {
		t.Run(codec.String(), func(t *testing.T) {
			mem := checkedMem(t)
			tbl := openOldSegment(t, name)
			defer tbl.Close()
			dec := NewDecoder(testSchema, mem)
			next := 0
			eachFrame(t, tbl, func(f *Frame) {
				if f.byBuffer || f.codec != codec || f.compressed() == 0 {
					t.Fatalf("frame at %d: byBuffer %v, codec %s, %d compressed bytes: not an old %s frame", f.BaseOffset, f.byBuffer, f.codec, f.compressed(), codec)
				}
				rec, err := f.Record(dec, testSchema)
				if err != nil {
					t.Fatal(err)
				}
				want := makeRecord(t, mem, next, f.Rows)
				if !array.RecordEqual(rec, want) {
					t.Errorf("frame at %d reads\n%v\nwant\n%v", f.BaseOffset, rec, want)
				}
				next += f.Rows
				rec.Release()
				want.Release()
			})
			if next != 3100 {
				t.Fatalf("read %d rows, want 3100", next)
			}
		})
	}
}
