package logstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/errs"
)

// sealedLog writes 20 frames of 100 rows (ids 0 to 1999), frame i with the
// statistics block {i}, to a one-bucket log of small segments and closes it.
// It returns the first segment, sealed, and where its frames start.
func sealedLog(t *testing.T, dir string, opts Options) (path string, pos []int64) {
	t.Helper()
	mem := checkedMem(t)
	tbl := mustOpen(t, dir, 1, opts)
	enc := newEncoder(t, CodecNone, mem)
	for i := range 20 {
		appendRows(t, tbl, enc, mem, 0, i*100, 100, []byte{byte(i)})
	}
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	bases, err := listSegments(vfs.Default, filepath.Join(dir, "0", "log"))
	if err != nil || len(bases) < 3 {
		t.Fatalf("segments %v (%v), want at least 3", bases, err)
	}
	path = filepath.Join(dir, "0", "log", segmentName(bases[0])+".log")
	pos, _ = framePositions(t, path)
	return path, pos
}

// frameAt parses the header and prefix of the frame at pos of a segment file.
func frameAt(t *testing.T, path string, pos int64) (header, prefix) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := parseHeader(data[pos:])
	if err != nil {
		t.Fatal(err)
	}
	p, err := parsePrefix(&h, data[pos:pos+int64(h.length)])
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

// flip inverts the bits of the byte at pos of a file.
func flip(t *testing.T, path string, pos int64) {
	t.Helper()
	b := make([]byte, 1)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(b, pos); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, pos); err != nil {
		t.Fatal(err)
	}
}

// wantDataLoss checks that err is DATA_LOSS naming the file and the byte
// where the damaged frame starts.
func wantDataLoss(t *testing.T, what string, err error, path string, pos int64) {
	t.Helper()
	if !errs.Is(err, errs.DataLoss) || !strings.Contains(err.Error(), fmt.Sprintf("%s at byte %d", path, pos)) {
		t.Fatalf("%s: %v (kind %v), want DATA_LOSS naming %s at byte %d", what, err, errs.KindOf(err), path, pos)
	}
}

// readErr reads bucket 0 from offset 0 to the high watermark, decoding
// every frame it does not skip, and returns the first error.
func readErr(tbl *Table, mem memory.Allocator, cols []int, skip func(stats []byte, rows int) bool) error {
	r, err := tbl.NewReader(0, 0, cols)
	if err != nil {
		return err
	}
	defer r.Close()
	if skip != nil {
		r.SkipIf(skip)
	}
	dec := NewDecoder(testSchema, mem)
	for {
		f, err := r.Next(tbl.HighWatermark(0))
		if err != nil || f == nil {
			return err
		}
		if f.Skipped {
			continue
		}
		var fields []arrow.Field
		for _, c := range f.cols {
			fields = append(fields, testSchema.Field(c))
		}
		rec, err := f.Record(dec, arrow.NewSchema(fields, nil))
		if err != nil {
			return err
		}
		rec.Release()
	}
}

// A byte flipped anywhere in a frame of a sealed segment (a value, a
// statistic, the header) is found by every read that reads it, plain,
// projected or filtered, and is DATA_LOSS naming the file and the frame's
// first byte: never a wrong value with OK, never a frame skipped on a
// damaged statistic. A projection that does not read the damaged column
// reads well.
func TestDamagedSealedFrameIsDataLossOnRead(t *testing.T) {
	skipAllBut2 := func(stats []byte, rows int) bool { return stats[0] != 2 }
	for _, tc := range []struct {
		name string
		at   func(h header, p prefix) int64 // the byte to flip, from the frame's start
		// reads that must fail, by projection (nil: all) and filter
		fail []read
		pass []read
	}{
		{
			name: "value",
			at:   func(h header, p prefix) int64 { return int64(p.colOffsets[0]+p.metaLens[0]) + 8 },
			fail: []read{{nil, nil}, {[]int{0}, nil}, {nil, skipAllBut2}},
			pass: []read{{[]int{1, 2}, nil}},
		},
		{
			name: "statistic",
			at:   func(h header, p prefix) int64 { return int64(h.statsAt()) },
			fail: []read{{nil, nil}, {[]int{2}, nil}, {nil, skipAllBut2}},
		},
		{
			name: "header",
			at:   func(header, prefix) int64 { return 20 }, // the commit time
			fail: []read{{nil, nil}, {[]int{1}, nil}, {nil, skipAllBut2}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, pos := sealedLog(t, dir, Options{SegmentBytes: 16 << 10, IndexIntervalBytes: 1 << 20})
			damaged := pos[2] // the frame of statistics {2}
			h, p := frameAt(t, path, damaged)
			flip(t, path, damaged+tc.at(h, p))
			tbl := mustOpen(t, dir, 1, Options{})
			defer tbl.Close()
			mem := checkedMem(t)
			for _, rd := range tc.fail {
				wantDataLoss(t, fmt.Sprintf("read of columns %v, filtered %v", rd.cols, rd.skip != nil), readErr(tbl, mem, rd.cols, rd.skip), path, damaged)
			}
			for _, rd := range tc.pass {
				if err := readErr(tbl, mem, rd.cols, rd.skip); err != nil {
					t.Fatalf("read of columns %v, which are intact: %v", rd.cols, err)
				}
			}
		})
	}
}

type read struct {
	cols []int
	skip func(stats []byte, rows int) bool
}

// A timestamp lookup reads frame headers only, and verifies them too.
func TestDamagedHeaderFailsTimestampLookup(t *testing.T) {
	dir := t.TempDir()
	var now int64
	clock := func() int64 { now += 1000; return now }
	opts := Options{SegmentBytes: 16 << 10, IndexIntervalBytes: 1 << 20, Now: func() time.Time { return time.UnixMilli(clock()) }}
	path, pos := sealedLog(t, dir, opts)
	flip(t, path, pos[3]+20) // the commit time of the fourth frame
	tbl := mustOpen(t, dir, 1, Options{})
	defer tbl.Close()
	_, err := tbl.OffsetForTime(0, 1<<62)
	wantDataLoss(t, "timestamp lookup", err, path, pos[3])
}

// A damaged segment summary is not used: a filtered scan reads the
// segment's frames instead of passing over a segment that holds rows it
// wants.
func TestDamagedSummaryIsNotUsed(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 16 << 10, Summarize: func(a, b []byte) []byte { return []byte{max(a[0], b[0])} }}
	path, pos := sealedLog(t, dir, opts)
	summary := strings.TrimSuffix(path, ".log") + ".summary"
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	max0 := byte(len(pos) - 1) // the largest statistic of the first segment
	if b[len(b)-1] != max0 {
		t.Fatalf("summary %v, want it to end in %d", b, max0)
	}
	b[len(b)-1] = 0 // would rule out every frame of the segment but the first
	if err := os.WriteFile(summary, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tbl := mustOpen(t, dir, 1, opts)
	defer tbl.Close()
	var got []int64
	r, err := tbl.NewReader(0, 0, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SkipIf(func(stats []byte, rows int) bool { return stats[0] != max0 })
	for {
		f, err := r.Next(tbl.HighWatermark(0))
		if err != nil {
			t.Fatal(err)
		}
		if f == nil {
			break
		}
		if !f.Skipped {
			got = append(got, f.BaseOffset)
		}
	}
	if want := int64(max0) * 100; len(got) != 1 || got[0] != want {
		t.Fatalf("the filtered scan read the frames at %v, want the one at %d", got, want)
	}
}

// Frames written before column checksums are verified whole: a value
// flipped in one, here while the log is open, is DATA_LOSS, also for a
// read that projects another column.
func TestDamagedFrameWithoutColumnChecksumsIsDataLoss(t *testing.T) {
	for codec, name := range oldSegments {
		t.Run(codec.String(), func(t *testing.T) {
			mem := checkedMem(t)
			tbl := openOldSegment(t, name)
			defer tbl.Close()
			path := tbl.buckets[0].active().logPath
			pos, _ := framePositions(t, path)
			h, p := frameAt(t, path, pos[1])
			if h.columnCRCs() {
				t.Fatalf("the frames of %s have column checksums", name)
			}
			flip(t, path, pos[1]+int64(p.colOffsets[1]+p.metaLens[1])+4)
			wantDataLoss(t, "projected read", readErr(tbl, mem, []int{0}, nil), path, pos[1])
		})
	}
}
