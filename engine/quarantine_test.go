package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/datadir"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

func openEngine(t *testing.T, dir string) *Engine {
	t.Helper()
	e, err := Open(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func createLogTable(t *testing.T, e *Engine, name string) *protocol.TableInfo {
	t.Helper()
	info, err := e.CreateTable(t.Context(), catalog.TableSpec{Table: name, Columns: []catalog.Column{{Name: "v", Type: "BIGINT"}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// A table directory the catalog does not name (a drop that crashed before
// removing it) is moved to quarantine with what it holds, not deleted.
func TestOrphanTableDataIsQuarantined(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	createLogTable(t, e, "kept")
	gone := createLogTable(t, e, "gone")
	if err := e.DropTable(t.Context(), "gone", false); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	orphan := e.tableDir(gone.TableID)
	if err := os.MkdirAll(orphan, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(orphan, "left-behind"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}

	e = openEngine(t, dir)
	defer e.Close()
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("%s is still there (%v)", orphan, err)
	}
	moved, err := filepath.Glob(filepath.Join(dir, QuarantineDir, "*-"+filepath.Base(orphan), "left-behind"))
	if err != nil || len(moved) != 1 {
		t.Fatalf("quarantined data: %v (%v), want the orphan's file", moved, err)
	}
	if _, err := e.LogBytesRead("kept"); err != nil {
		t.Fatalf("the named table: %v", err)
	}
}

// A table the catalog names whose data is in quarantine is unavailable, with
// DataLoss saying where the data is, rather than opened empty.
func TestTableWithQuarantinedDataIsUnavailable(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	info := createLogTable(t, e, "t")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	q := filepath.Join(dir, QuarantineDir, "20260101T000000Z-"+filepath.Base(e.tableDir(info.TableID)))
	if err := datadir.Move(e.tableDir(info.TableID), q); err != nil {
		t.Fatal(err)
	}

	e = openEngine(t, dir)
	defer e.Close()
	_, err := e.LogBytesRead("t")
	if errs.KindOf(err) != errs.DataLoss || !strings.Contains(err.Error(), q) {
		t.Fatalf("a table whose data is in quarantine: %v, want DataLoss naming %s", err, q)
	}
	if _, err := os.Stat(e.tableDir(info.TableID)); !os.IsNotExist(err) {
		t.Fatalf("an empty %s was made (%v)", e.tableDir(info.TableID), err)
	}
	if next := createLogTable(t, e, "u"); next.TableID <= info.TableID {
		t.Fatalf("new table id %d, want above %d", next.TableID, info.TableID)
	}
}
