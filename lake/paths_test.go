package lake

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/hadoop"
)

// lakePaths returns the current snapshot's manifest list, manifests and
// files (data and delete), as the metadata names them.
func lakePaths(t *testing.T, lt *Table) []string {
	t.Helper()
	tbl := lt.current()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{tbl.CurrentSnapshot().ManifestList}
	ms, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		paths = append(paths, m.FilePath())
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			paths = append(paths, e.DataFile().FilePath())
		}
	}
	return paths
}

// A new table of the filesystem catalog has a file:// location, and so names
// its files by URI in manifest lists, manifests and position deletes, and
// reads and compacts through them.
func TestFilesystemLakeNamesFilesByURI(t *testing.T) {
	ctx := context.Background()
	mem := checkedAllocator(t)
	info := usersInfo(t)
	warehouse := t.TempDir()
	_, lt := openLake(t, warehouse, info)
	commitRows(t, mem, lt, info, 0, 0, []int64{1, 2, 3}, []string{"a", "b", "c"}, nil)
	snap := commitRows(t, mem, lt, info, 0, 3, []int64{2}, []string{"b2"}, []int64{2, 3})
	want := "file://" + filepath.Join(warehouse, "fluss", "users") + "/"
	if got := lt.Location() + "/"; got != want {
		t.Errorf("the table's location is %s, want %s", got, want)
	}
	if got := lt.MetadataLocation(); !strings.HasPrefix(got, want+"metadata/") {
		t.Errorf("the table's metadata file is %s, want a URI under %smetadata/", got, want)
	}
	paths := lakePaths(t, lt)
	if len(paths) < 5 { // a manifest list, data and delete manifests, two data files, a delete file
		t.Fatalf("the lake names %d paths, want at least 5: %v", len(paths), paths)
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, want) {
			t.Errorf("the lake names %s, want a URI under %s", p, want)
		}
	}
	if got := scanIDs(t, mem, lt, snap.ID, 0); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("bucket 0 holds %v, want [1 2]", got)
	}
	st, err := lt.Compact(ctx, CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := scanIDs(t, mem, lt, st.Snapshot.ID, 0); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("bucket 0 after compaction holds %v, want [1 2]", got)
	}
	for _, p := range lakePaths(t, lt) {
		if !strings.HasPrefix(p, want) {
			t.Errorf("after compaction the lake names %s, want a URI under %s", p, want)
		}
	}
}

// A table made before files were named by URI keeps its plain paths, and
// reads, takes rounds and compacts as before.
func TestPlainPathLakeStillWorks(t *testing.T) {
	ctx := context.Background()
	mem := checkedAllocator(t)
	info := usersInfo(t)
	warehouse := t.TempDir()
	cat, err := hadoop.NewCatalog("fluxgate", warehouse, nil)
	if err != nil {
		t.Fatal(err)
	}
	old, err := Open(ctx, Options{Iceberg: cat}) // as earlier versions made tables: no file:// properties
	if err != nil {
		t.Fatal(err)
	}
	lt, err := old.Ensure(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	commitRows(t, mem, lt, info, 0, 0, []int64{1, 2, 3}, []string{"a", "b", "c"}, nil)

	_, lt = openLake(t, warehouse, info)
	snap := commitRows(t, mem, lt, info, 0, 3, []int64{2}, []string{"b2"}, []int64{2, 3})
	if got := scanIDs(t, mem, lt, snap.ID, 0); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("bucket 0 holds %v, want [1 2]", got)
	}
	if _, err := lt.Compact(ctx, CompactOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := lt.MetadataLocation(), "file://"+filepath.Join(warehouse, "fluss", "users", "metadata")+"/"; !strings.HasPrefix(got, want) {
		t.Errorf("the old table's metadata file is given as %s, want a URI under %s", got, want)
	}
	for _, p := range lakePaths(t, lt) {
		if !strings.HasPrefix(p, filepath.Join(warehouse, "fluss", "users")+"/") {
			t.Errorf("the old table names %s, want a plain path under its location", p)
		}
	}
	if got := scanIDs(t, mem, lt, lt.current().CurrentSnapshot().SnapshotID, 0); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("bucket 0 after compaction holds %v, want [1 2]", got)
	}
}

// checkPathsResolve checks that every path the current snapshot names is a
// file's real URI: the file is there whether a reader decodes the URI's
// escapes (iceberg-go) or takes its path as it is (pyiceberg, Hadoop's
// Path, DuckDB), because the path has no escapes.
func checkPathsResolve(t *testing.T, lt *Table) {
	t.Helper()
	for _, p := range lakePaths(t, lt) {
		local, ok := strings.CutPrefix(p, "file://")
		if !ok {
			t.Errorf("the lake names %s, want a file:// URI", p)
			continue
		}
		if strings.Contains(local, "%") {
			t.Errorf("the lake names %s, whose escapes readers resolve differently", p)
		}
		if _, err := os.Stat(local); err != nil {
			t.Errorf("the lake names %s, which is not there: %v", p, err)
		}
	}
}

// Files a refused write left in a table's location (Spark writes its data
// and manifest files, with Hadoop's .crc companions, before the catalog
// refuses its commit) are deleted by the orphan sweep after a compaction
// once older than its window, and nothing the lake references goes.
func TestOrphanSweepRemovesRefusedWrites(t *testing.T) {
	ctx := context.Background()
	mem := checkedAllocator(t)
	info := usersInfo(t)
	warehouse := t.TempDir()
	_, lt := openLake(t, warehouse, info)
	snap := commitRows(t, mem, lt, info, 0, 0, []int64{1, 2}, []string{"a", "b"}, nil)
	table := filepath.Join(warehouse, "fluss", "users")
	orphans := []string{
		"data/00000-7-3f1c.parquet", "data/.00000-7-3f1c.parquet.crc",
		"data/ts=2026-12-01T10%3A00%3A00/00000-8-3f1c.parquet",
		"metadata/3f1c-m0.avro", "metadata/.3f1c-m0.avro.crc", "metadata/snap-42-1-3f1c.avro",
	}
	old := time.Now().Add(-25 * time.Hour)
	for _, o := range orphans {
		p := filepath.Join(table, o)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("refused"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	st, err := lt.Compact(ctx, CompactOptions{})
	if err != nil || st.MaintenanceErr != nil {
		t.Fatalf("compaction: %v, maintenance: %v", err, st.MaintenanceErr)
	}
	for _, o := range orphans {
		if _, err := os.Stat(filepath.Join(table, o)); !os.IsNotExist(err) {
			t.Errorf("the orphan %s is still there (%v)", o, err)
		}
	}
	checkPathsResolve(t, lt)
	if got := scanIDs(t, mem, lt, snap.ID, 0); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("after the sweep bucket 0 holds %v, want [1 2]", got)
	}
}
