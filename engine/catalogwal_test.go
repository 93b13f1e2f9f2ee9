package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A catalog whose write-ahead log was deleted (all it held since its last
// flush is gone) refuses to open naming what is missing and what to do,
// not with pebble's "read-only"; the table data stays where it is.
func TestDeletedCatalogLogRefusesToOpen(t *testing.T) {
	dir := t.TempDir()
	e := openPartitioned(t, dir, Options{})
	if _, err := e.CreateTable(t.Context(), tsSpec("kept", false, false), false); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	wals, err := filepath.Glob(filepath.Join(dir, "catalog", "*.log"))
	if err != nil || len(wals) == 0 {
		t.Fatalf("catalog logs %v (%v), want some", wals, err)
	}
	for _, w := range wals {
		if err := os.Remove(w); err != nil {
			t.Fatal(err)
		}
	}
	tables, _ := os.ReadDir(filepath.Join(dir, "tables"))
	_, err = Open(t.Context(), dir, Options{})
	if err == nil {
		t.Fatal("the engine opened a catalog whose log was deleted")
	}
	for _, want := range []string{"is behind the table data", "write-ahead log (" + filepath.Join(dir, "catalog", "*.log") + ") is missing",
		"`fluxgate repair` does not mend a catalog", "move " + filepath.Join(dir, "catalog") + " away"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("open: %v\nwant it to say %q", err, want)
		}
	}
	if after, _ := os.ReadDir(filepath.Join(dir, "tables")); len(after) != len(tables) {
		t.Errorf("tables/ holds %d entries after the refusal, %d before", len(after), len(tables))
	}
}
