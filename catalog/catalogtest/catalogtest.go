// Package catalogtest sets up catalogs for tests (and only for tests): one
// in a temporary directory, closed when the test ends, and its tables.
package catalogtest

import (
	"testing"

	"github.com/fluxgate-io/fluxgate/catalog"
)

// Open opens a catalog in a temporary directory of t and closes it when t
// ends.
func Open(t testing.TB) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Open(t.TempDir(), catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cat.Close(); err != nil {
			t.Error(err)
		}
	})
	return cat
}

// Table creates the table of spec in cat.
func Table(t testing.TB, cat *catalog.Catalog, spec catalog.TableSpec) *catalog.TableInfo {
	t.Helper()
	info, _, err := cat.CreateTable(spec, false)
	if err != nil {
		t.Fatalf("%s: %v", spec.Table, err)
	}
	return info
}
