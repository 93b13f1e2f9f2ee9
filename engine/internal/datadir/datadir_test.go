package datadir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Scan lists the tables' directories by id and the quarantined ones by the
// id their name ends in; other entries are not table data.
func TestScan(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{TableDir(dir, 3), TableDir(dir, 12), QuarantinePath(dir, 7, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(TablesDir(dir), "99"), filepath.Join(TablesDir(dir), "notes")} {
		if err := os.WriteFile(f, nil, 0o644); err != nil { // files, not table directories
			t.Fatal(err)
		}
	}
	d, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(d.Tables)
	if !slices.Equal(d.Tables, []int64{3, 12}) {
		t.Errorf("tables %v, want [3 12]", d.Tables)
	}
	if want := filepath.Join(dir, QuarantineDir, "20260102T030405Z-7"); len(d.Quarantined) != 1 || d.Quarantined[7] != want {
		t.Errorf("quarantined %v, want 7 at %s", d.Quarantined, want)
	}
	if d.MaxID() != 12 {
		t.Errorf("max id %d, want 12", d.MaxID())
	}
}

// An empty data directory has no table data.
func TestScanEmpty(t *testing.T) {
	d, err := Scan(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tables) != 0 || len(d.Quarantined) != 0 || d.MaxID() != 0 {
		t.Errorf("empty directory: %+v", d)
	}
}

// Move creates the destination's parent and moves the directory whole.
func TestMove(t *testing.T) {
	dir := t.TempDir()
	from := TableDir(dir, 5)
	if err := os.MkdirAll(from, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(from, "log"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	to := QuarantinePath(dir, 5, time.Now())
	if err := Move(from, to); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(from); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", from, err)
	}
	if b, err := os.ReadFile(filepath.Join(to, "log")); err != nil || string(b) != "data" {
		t.Errorf("moved file: %q, %v", b, err)
	}
}
