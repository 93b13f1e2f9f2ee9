package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Cutting a corrupt log where Open said makes it open with the frames
// before the cut, and moves what was cut, newer segments included, aside.
func TestRepairAtCorruption(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	writeFrames(t, dir, 6, Options{SegmentBytes: 1, IndexIntervalBytes: 1 << 20}, true)
	logDir := filepath.Join(dir, "0", "log")
	bases, err := listSegments(vfs.Default, logDir)
	if err != nil || len(bases) < 3 {
		t.Fatalf("segments %v (%v), want at least 3", bases, err)
	}
	path := filepath.Join(logDir, segmentName(bases[1])+".log")
	pos, size := framePositions(t, path)
	overwrite(t, path, pos[len(pos)-1], []byte("XXXX")) // a sealed segment's headers are checked on open
	_, err = Open(dir, 1, Options{})
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("open: %v, want a *CorruptError", err)
	}

	if _, err := PlanRepair(dir, 1, ce.Path, ce.Pos+1); err == nil {
		t.Error("a cut inside a frame was planned")
	}
	if _, err := PlanRepair(dir, 1, filepath.Join(dir, "writers.json"), 0); err == nil {
		t.Error("a cut in a file that is no segment was planned")
	}
	plan, err := PlanRepair(dir, 1, ce.Path, ce.Pos)
	if err != nil {
		t.Fatal(err)
	}
	if plan.KeptEnd != bases[1]+int64(10*(len(pos)-1)) || len(plan.Newer) != len(bases)-2 || plan.Writers == "" {
		t.Fatalf("plan %+v: want the log to end at %d, %d newer segments and writers.json", plan, bases[1]+int64(10*(len(pos)-1)), len(bases)-2)
	}
	dest := filepath.Join(t.TempDir(), "cut")
	if err := plan.Apply(dest); err != nil {
		t.Fatal(err)
	}
	tail, err := os.ReadFile(filepath.Join(dest, "0", filepath.Base(path)+".from-"+strconv.FormatInt(ce.Pos, 10)))
	if err != nil || int64(len(tail)) != size-ce.Pos {
		t.Fatalf("cut bytes kept: %d (%v), want %d", len(tail), err, size-ce.Pos)
	}
	for _, seg := range plan.Newer {
		if _, err := os.Stat(filepath.Join(dest, "0", filepath.Base(seg))); err != nil {
			t.Errorf("newer segment not moved aside: %v", err)
		}
	}

	tbl := mustOpen(t, dir, 1, Options{})
	defer tbl.Close()
	if got := readAll(t, tbl, 0, 0, nil, mem); int64(len(got)) != plan.KeptEnd {
		t.Fatalf("read %d rows after the repair, want %d", len(got), plan.KeptEnd)
	}
}
