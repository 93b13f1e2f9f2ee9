package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/lake"
)

// A SQL lake catalog without a warehouse keeps the lake in <data>/lake, as
// the filesystem catalog does, instead of failing at the first lake-enabled
// create-table.
func TestSQLLakeCatalogWithoutWarehouse(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(ctx, dir, Options{Lake: LakeOptions{Catalog: map[string]string{
		"type": "sql", "uri": "file:" + filepath.Join(dir, "lake.db"), "sql.driver": "sqlite", "sql.dialect": "sqlite"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateTable(ctx, catalog.TableSpec{Table: "fluss.clicks", Columns: []catalog.Column{{Name: "page", Type: "STRING"}},
		Options: map[string]string{catalog.OptDatalakeEnabled: "true"}}, false); err != nil {
		t.Fatal(err)
	}
	lt, err := e.LakeTable(ctx, "fluss.clicks")
	if err != nil {
		t.Fatal(err)
	}
	if want := "file://" + lake.DefaultWarehouse(dir) + "/"; !strings.HasPrefix(lt.MetadataLocation(), want) {
		t.Errorf("metadata at %s, want under %s", lt.MetadataLocation(), want)
	}
}
