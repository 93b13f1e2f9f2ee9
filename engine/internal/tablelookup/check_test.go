package tablelookup

import (
	"slices"
	"testing"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A lookup's columns are the table's, in the asked order.
func TestCheckColumns(t *testing.T) {
	info := testTable(t)
	cols, err := Check(info, info.Path(), protocol.LookupRequest{Columns: []string{"name", "id"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 0}; !slices.Equal(cols, want) {
		t.Errorf("columns %v, want %v", cols, want)
	}
}

// Check refuses, each with its kind, what a lookup cannot do.
func TestCheckRefused(t *testing.T) {
	info := testTable(t)
	logTable := testTable(t, catalog.TableSpec{Table: "clicks", Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}}})
	view := info.Path()
	view.View = protocol.ViewChangelog
	for _, c := range []struct {
		name string
		info *catalog.TableInfo
		path protocol.TablePath
		req  protocol.LookupRequest
		kind errs.Kind
	}{
		{"view", info, view, protocol.LookupRequest{}, errs.FailedPrecondition},
		{"log table", logTable, logTable.Path(), protocol.LookupRequest{}, errs.FailedPrecondition},
		{"prefix insert", info, info.Path(), protocol.LookupRequest{Prefix: true, InsertIfNotExists: true}, errs.InvalidArgument},
		{"no prefix index", info, info.Path(), protocol.LookupRequest{Prefix: true}, errs.FailedPrecondition},
		{"unknown column", info, info.Path(), protocol.LookupRequest{Columns: []string{"nope"}}, errs.NotFound},
		{"column twice", info, info.Path(), protocol.LookupRequest{Columns: []string{"id", "id"}}, errs.InvalidArgument},
	} {
		if _, err := Check(c.info, c.path, c.req); !errs.Is(err, c.kind) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.kind)
		}
	}
}
