package logstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// writeFrames appends batches of 10 rows (ids 0, 10, 20, ...) to bucket 0 of
// a one-bucket log in dir, then either closes it cleanly (which records the
// synced end in writers.json) or drops it as a crash would.
func writeFrames(t *testing.T, dir string, batches int, opts Options, clean bool) {
	t.Helper()
	mem := checkedMem(t)
	tbl := mustOpen(t, dir, 1, opts)
	enc := newEncoder(t, CodecNone, mem)
	for i := range batches {
		appendRows(t, tbl, enc, mem, 0, i*10, 10, nil)
	}
	if clean {
		if err := tbl.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		crash(tbl)
	}
}

// framePositions returns the byte position of every intact frame of a
// segment file, and its size.
func framePositions(t *testing.T, path string) ([]int64, int64) {
	t.Helper()
	f, err := vfs.Default.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	var pos []int64
	end, err := scanFrames(f, 0, st.Size(), true, func(_ *header, p int64, _ []byte) error {
		pos = append(pos, p)
		return nil
	})
	if err != nil || end != st.Size() {
		t.Fatalf("scan %s: stopped at %d of %d: %v", path, end, st.Size(), err)
	}
	return pos, st.Size()
}

// overwrite replaces bytes of a file at pos.
func overwrite(t *testing.T, path string, pos int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, pos); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// openCorrupt opens dir expecting a *CorruptError at path and pos, and checks
// that the failed open cut nothing.
func openCorrupt(t *testing.T, dir, path string, pos int64) *CorruptError {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := Open(dir, 1, Options{})
	if err == nil {
		tbl.Close()
		t.Fatalf("a log with a damaged frame at byte %d of %s opened", pos, path)
	}
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("open: %v, want a *CorruptError", err)
	}
	if ce.Path != path || ce.Pos != pos {
		t.Fatalf("corruption reported at %s:%d, want %s:%d (%v)", ce.Path, ce.Pos, path, pos, err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatalf("the failed open changed %s (%d bytes, was %d)", path, len(after), len(before))
	}
	return ce
}

func activeSegment(dir string) string {
	return filepath.Join(dir, "0", "log", segmentName(0)+".log")
}

// A frame damaged in the middle of the log, with intact frames after it, is
// corruption, even after a crash (no synced end recorded): the log refuses
// to open and keeps every byte.
func TestDamagedFrameFollowedByFramesIsCorrupt(t *testing.T) {
	dir := t.TempDir()
	writeFrames(t, dir, 5, Options{}, false)
	path := activeSegment(dir)
	pos, _ := framePositions(t, path)
	overwrite(t, path, pos[2]+100, bytes.Repeat([]byte{0xff}, 16))
	ce := openCorrupt(t, dir, path, pos[2])
	if ce.Problem != "a frame whose checksum does not match" {
		t.Errorf("problem %q, want a checksum mismatch", ce.Problem)
	}
}

// A damaged header is found the same way, and so is a damaged length that
// makes the frame run past the end of the file.
func TestDamagedHeaderFollowedByFramesIsCorrupt(t *testing.T) {
	for name, damage := range map[string][]byte{
		"magic":  []byte("XXXX"),
		"length": {0xff, 0xff, 0xff, 0x7f},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFrames(t, dir, 4, Options{}, false)
			path := activeSegment(dir)
			pos, _ := framePositions(t, path)
			at := pos[1]
			if name == "length" {
				at += 4
			}
			overwrite(t, path, at, damage)
			openCorrupt(t, dir, path, pos[1])
		})
	}
}

// Damage to the last frame after a clean close is corruption too: writers.json
// records that frame as synced, so it is no torn write.
func TestDamagedSyncedLastFrameIsCorrupt(t *testing.T) {
	dir := t.TempDir()
	writeFrames(t, dir, 3, Options{}, true)
	path := activeSegment(dir)
	pos, _ := framePositions(t, path)
	overwrite(t, path, pos[2]+100, bytes.Repeat([]byte{0xff}, 16))
	ce := openCorrupt(t, dir, path, pos[2])
	if want := "writers.json records offsets up to 30 of this bucket as synced, past the frame's first offset 20"; ce.Evidence != want {
		t.Errorf("evidence %q, want %q", ce.Evidence, want)
	}
}

// After a crash, a damaged last frame with nothing intact after it is a torn
// write: recovery cuts it and keeps the frames before it. So it does for
// zeros after the last frame (a file extended but not written).
func TestTornTailsAreCut(t *testing.T) {
	for name, tear := range map[string]func(path string, pos []int64, size int64){
		"garbage in the last frame": func(path string, pos []int64, _ int64) {
			overwrite(t, path, pos[2]+100, bytes.Repeat([]byte{0xff}, 16))
		},
		"last frame cut short": func(path string, pos []int64, _ int64) {
			if err := os.Truncate(path, pos[2]+50); err != nil {
				t.Fatal(err)
			}
		},
		"zeros after the last frame": func(path string, _ []int64, size int64) {
			overwrite(t, path, size, make([]byte, 4096))
		},
	} {
		t.Run(name, func(t *testing.T) {
			mem := checkedMem(t)
			dir := t.TempDir()
			writeFrames(t, dir, 3, Options{}, false)
			path := activeSegment(dir)
			pos, size := framePositions(t, path)
			tear(path, pos, size)
			tbl := mustOpen(t, dir, 1, Options{})
			defer tbl.Close()
			want := 30
			if name != "zeros after the last frame" {
				want = 20
			}
			if got := readAll(t, tbl, 0, 0, nil, mem); len(got) != want {
				t.Fatalf("read %d rows after recovery, want %d", len(got), want)
			}
		})
	}
}

// A frame damaged in a sealed segment, newer segments after it, is
// corruption: it is never cut, whole segments after it never dropped.
func TestDamagedSealedSegmentIsCorrupt(t *testing.T) {
	dir := t.TempDir()
	// Two frames a segment; one index entry a segment, so that opening walks
	// every frame header of the sealed segments.
	opts := Options{SegmentBytes: 1, IndexIntervalBytes: 1 << 20}
	writeFrames(t, dir, 6, opts, false)
	logDir := filepath.Join(dir, "0", "log")
	bases, err := listSegments(vfs.Default, logDir)
	if err != nil || len(bases) < 3 {
		t.Fatalf("segments %v (%v), want at least 3", bases, err)
	}
	path := filepath.Join(logDir, segmentName(bases[0])+".log")
	pos, _ := framePositions(t, path)
	overwrite(t, path, pos[len(pos)-1], []byte("XXXX"))
	openCorrupt(t, dir, path, pos[len(pos)-1])
	if after, err := listSegments(vfs.Default, logDir); err != nil || len(after) != len(bases) {
		t.Fatalf("segments after the failed open: %v (%v), want %v", after, err, bases)
	}
}

// findIntactFrame finds a frame at any byte position, across the windows it
// reads, and nothing in garbage.
func TestFindIntactFrame(t *testing.T) {
	dir := t.TempDir()
	writeFrames(t, dir, 1, Options{}, false)
	frame, err := os.ReadFile(activeSegment(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{0, 1, 1<<20 - 2, 1 << 20, 1<<20 + 7} {
		junk := bytes.Repeat([]byte("FGL1junk"), (at+7)/8)[:at]
		data := append(append(junk, frame...), "FGL1"...)
		got, err := findIntactFrame(bytes.NewReader(data), 0, int64(len(data)))
		if err != nil || got != int64(at) {
			t.Errorf("frame at %d: found at %d (%v)", at, got, err)
		}
	}
	junk := bytes.Repeat([]byte("FGL1junk"), 1<<18)
	if got, err := findIntactFrame(bytes.NewReader(junk), 0, int64(len(junk))); err != nil || got != -1 {
		t.Errorf("garbage: found a frame at %d (%v)", got, err)
	}
}
