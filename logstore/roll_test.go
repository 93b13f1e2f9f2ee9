package logstore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// crashImages is a filesystem that, whenever a segment file is created (a
// roll), copies the log files of its directory as they are at that moment
// into a new directory: what a SIGKILL right after the roll would leave. It
// also notes which segment files were written and not synced since.
// While held, the next segment write waits for the next such copy (or,
// should none come, a while), which ends the hold: a frame that the roll
// does not wait for is then certain to be missing from the copy.
type crashImages struct {
	vfs.FS
	t        *testing.T
	mu       sync.Mutex
	hold     chan struct{}   // closed by the next copy; nil: writes go ahead
	images   []string        // table directories of one bucket, in order of the rolls
	unsynced [][]string      // per image, the segment files written and not synced then
	dirty    map[string]bool // segment files written and not synced since
}

// holdWrites makes the next segment write wait for the next roll's copy.
func (c *crashImages) holdWrites() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hold = make(chan struct{})
}

func (c *crashImages) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	_, statErr := os.Stat(name)
	f, err := c.FS.OpenReadWrite(name, category, opts...)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	if os.IsNotExist(statErr) {
		c.snapshot(filepath.Dir(name))
	}
	return heldFile{f, c, name}, nil
}

// heldFile is a segment file of crashImages. Not being the real disk's
// file, it takes a frame's pieces one WriteAt each (see writeVecAt).
type heldFile struct {
	vfs.File
	c    *crashImages
	name string
}

// holdLimit bounds how long a held write waits: a roll that waits for it
// makes no copy meanwhile.
const holdLimit = 300 * time.Millisecond

func (f heldFile) WriteAt(p []byte, off int64) (int, error) {
	f.c.mu.Lock()
	hold := f.c.hold
	f.c.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-time.After(holdLimit):
			f.c.mu.Lock()
			if f.c.hold == hold {
				f.c.hold = nil
			}
			f.c.mu.Unlock()
		}
	}
	n, err := f.File.WriteAt(p, off)
	f.c.mu.Lock()
	f.c.dirty[f.name] = true
	f.c.mu.Unlock()
	return n, err
}

func (f heldFile) Sync() error {
	err := f.File.Sync()
	if err == nil {
		f.c.mu.Lock()
		delete(f.c.dirty, f.name)
		f.c.mu.Unlock()
	}
	return err
}

func (c *crashImages) snapshot(logDir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	image := c.t.TempDir()
	to := filepath.Join(image, "0", "log")
	if err := os.MkdirAll(to, 0o755); err != nil {
		c.t.Error(err)
		return
	}
	entries, err := os.ReadDir(logDir)
	if err != nil {
		c.t.Error(err)
		return
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(logDir, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(to, e.Name()), b, 0o644)
		}
		if err != nil {
			c.t.Error(err)
		}
	}
	c.images = append(c.images, image)
	var unsynced []string
	for name := range c.dirty {
		unsynced = append(unsynced, name)
	}
	c.unsynced = append(c.unsynced, unsynced)
	if c.hold != nil {
		close(c.hold)
		c.hold = nil
	}
}

// A roll names the new segment by its first offset only once every frame
// below it is written and synced: a crash right after a roll leaves a log
// that ends where its frames do and reads whole from its first offset. The
// frame queued just before the roll is held back from the disk until the
// roll's copy is made, unless the roll waits for it.
func TestRollNamesNoSegmentPastTheFramesBefore(t *testing.T) {
	mem := checkedMem(t)
	fs := &crashImages{FS: vfs.Default, t: t, dirty: map[string]bool{}}
	tbl := mustOpen(t, t.TempDir(), 1, Options{FS: fs, SegmentBytes: 100 << 10})
	defer tbl.Close()
	enc := newEncoder(t, CodecNone, mem)
	appendRows(t, tbl, enc, mem, 0, 0, 10, nil)
	opened := len(fs.images) // the first segment's
	const big = 2000         // rows: about 60 KB, so two frames do not fit a segment
	var batches []*Batch
	for _, from := range []int{10, 10 + big} {
		rec := makeRecord(t, mem, from, big)
		batches = append(batches, encode(t, enc, rec, Writer{}))
		rec.Release()
	}
	fs.holdWrites()
	var pending []*Pending
	for _, b := range batches {
		p, err := tbl.AppendAsync([]Part{{Bucket: 0, Batch: b}}, Writer{})
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
	}
	for _, p := range pending {
		if _, err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(fs.images) - opened; n != 1 {
		t.Fatalf("%d rolls, want 1", n)
	}
	if unsynced := fs.unsynced[opened]; len(unsynced) > 0 {
		t.Fatalf("the roll named the new segment with %v written and not synced", unsynced)
	}
	image := mustOpen(t, fs.images[opened], 1, Options{})
	defer image.Close()
	if hw := image.HighWatermark(0); hw != 10+big {
		t.Fatalf("after a crash at the roll the log ends at %d, want %d: the frames before the new segment's name", hw, 10+big)
	}
	got := ids(t, image, mem)
	if len(got) != 10+big || got[0] != 0 || got[len(got)-1] != 10+big-1 {
		t.Fatalf("after a crash at the roll the log reads %d rows, want ids 0 to %d", len(got), 10+big-1)
	}
}

// A log that an older roll left with empty segments named past its last
// frame (offsets that were never written) opens with its end at that frame:
// the empty files go, every frame reads from the first offset on, and
// appends go on from there.
func TestRecoveryDropsEmptySegmentsNamedPastTheEnd(t *testing.T) {
	for _, misnamed := range []int{1, 2} {
		t.Run(strings.Repeat("empty segment ", misnamed), func(t *testing.T) {
			mem := checkedMem(t)
			dir := t.TempDir()
			opts := Options{SegmentBytes: 4 << 10}
			tbl := mustOpen(t, dir, 1, opts)
			enc := newEncoder(t, CodecNone, mem)
			for i := range 6 {
				appendRows(t, tbl, enc, mem, 0, i*100, 100, nil)
			}
			if err := tbl.Close(); err != nil {
				t.Fatal(err)
			}
			logDir := filepath.Join(dir, "0", "log")
			bases, err := listSegments(vfs.Default, logDir)
			if err != nil || len(bases) < 2 {
				t.Fatalf("segments %v, %v: want some rolled", bases, err)
			}
			for k := range misnamed {
				name := filepath.Join(logDir, segmentName(600+int64(40*(k+1)))+".log")
				if err := os.WriteFile(name, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tbl = mustOpen(t, dir, 1, opts)
			defer func() { tbl.Close() }()
			if hw := tbl.HighWatermark(0); hw != 600 {
				t.Fatalf("the log ends at %d, want 600, after its last frame", hw)
			}
			if got := ids(t, tbl, mem); len(got) != 600 || got[599] != 599 {
				t.Fatalf("read %d rows, want ids 0 to 599", len(got))
			}
			after, err := listSegments(vfs.Default, logDir)
			if err != nil || len(after) != len(bases) {
				t.Fatalf("segments %v after the open (%v), want %v", after, err, bases)
			}
			appendRows(t, tbl, enc, mem, 0, 600, 100, nil)
			if err := tbl.Close(); err != nil {
				t.Fatal(err)
			}
			tbl = mustOpen(t, dir, 1, opts)
			if got := ids(t, tbl, mem); len(got) != 700 || got[699] != 699 {
				t.Fatalf("after an append and a reopen read %d rows, want ids 0 to 699", len(got))
			}
		})
	}
}

// A segment that is active when the log is reopened and sealed later keeps
// in its summary the statistics of the frames before the reopen too: a
// filtered scan must not pass over those frames.
func TestSummaryCoversFramesBeforeReopen(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	opts := Options{SegmentBytes: 64 << 10, Summarize: func(a, b []byte) []byte { return []byte{max(a[0], b[0])} }}
	tbl := mustOpen(t, dir, 1, opts)
	enc := newEncoder(t, CodecNone, mem)
	appendRows(t, tbl, enc, mem, 0, 0, 100, []byte{50})
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	tbl = mustOpen(t, dir, 1, opts)
	defer tbl.Close()
	for i := 0; len(tbl.buckets[0].segments()) < 3; i++ {
		appendRows(t, tbl, enc, mem, 0, 100+i*1000, 1000, []byte{1})
	}
	r, err := tbl.NewReader(0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SkipIf(func(stats []byte, rows int) bool { return stats[0] < 35 })
	read := 0
	for {
		f, err := r.Next(tbl.HighWatermark(0))
		if err != nil {
			t.Fatal(err)
		}
		if f == nil {
			break
		}
		if !f.Skipped {
			read += f.Rows
		}
	}
	if read != 100 {
		t.Fatalf("the filtered scan read %d rows, want the 100 appended before the reopen", read)
	}
}

// A log that an older roll left with offsets missing between two segments,
// and frames after them (an older version went on appending to the segment
// named past its frames), reads whole: the reader goes on at the next
// segment, before and after a reopen, and recovery keeps every frame.
func TestReadsPassOverOffsetsMissingBetweenSegments(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	opts := Options{SegmentBytes: 4 << 10}
	tbl := mustOpen(t, dir, 1, opts)
	enc := newEncoder(t, CodecNone, mem)
	for i := range 6 {
		appendRows(t, tbl, enc, mem, 0, i*100, 100, nil)
	}
	// What such a roll did: the next segment is named past the frames.
	tbl.appendMu.Lock()
	tbl.buckets[0].logEnd += 40
	tbl.appendMu.Unlock()
	for i := range 3 {
		appendRows(t, tbl, enc, mem, 0, 600+i*100, 100, nil)
	}
	check := func(tbl *Table) {
		t.Helper()
		var offsets []int64
		eachFrame(t, tbl, func(f *Frame) { offsets = append(offsets, f.BaseOffset) })
		want := []int64{0, 100, 200, 300, 400, 500, 640, 740, 840}
		if !slices.Equal(offsets, want) {
			t.Fatalf("frames at offsets %v, want %v", offsets, want)
		}
		if got := ids(t, tbl, mem); len(got) != 900 || got[899] != 899 {
			t.Fatalf("read %d rows, want ids 0 to 899", len(got))
		}
	}
	check(tbl)
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	tbl = mustOpen(t, dir, 1, opts)
	defer tbl.Close()
	check(tbl)
	if hw := tbl.HighWatermark(0); hw != 940 {
		t.Fatalf("high watermark %d, want 940", hw)
	}
}
