package viewplan

import (
	"slices"
	"testing"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/catalog/catalogtest"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

func testTable(t *testing.T) *catalog.TableInfo {
	t.Helper()
	return catalogtest.Table(t, catalogtest.Open(t), catalog.TableSpec{
		Table:      "events",
		Columns:    []catalog.Column{{Name: "id", Type: "BIGINT"}, {Name: "name", Type: "STRING"}, {Name: "amount", Type: "DOUBLE"}},
		PrimaryKey: []string{"id"},
	})
}

// A $changelog scan's columns are named among the system columns, then the
// table's; the filter's columns are built too, and only table columns are
// read from the log.
func TestResolveChangelogColumnsAndFilter(t *testing.T) {
	info := testTable(t)
	p, err := Resolve(info, protocol.ViewChangelog, []string{"amount", ColLogOffset}, []byte(`{"eq": ["name", "x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	// View: _change_type 0, _log_offset 1, _commit_timestamp 2, id 3, name 4, amount 5.
	if p.System != len(ChangelogFields) || p.View.NumFields() != len(ChangelogFields)+3 {
		t.Fatalf("view %v, %d system columns", p.View, p.System)
	}
	if want := []int{5, 1}; !slices.Equal(p.Out, want) {
		t.Errorf("out %v, want %v", p.Out, want)
	}
	if want := []int{1, 4, 5}; !slices.Equal(p.Need, want) {
		t.Errorf("need %v, want %v", p.Need, want)
	}
	if want := []int{1, 2}; !slices.Equal(p.Read, want) {
		t.Errorf("read %v, want %v (name, amount)", p.Read, want)
	}
	if want := []int{2, 0}; !slices.Equal(p.OutPositions(), want) {
		t.Errorf("out positions %v, want %v", p.OutPositions(), want)
	}
	if got := ColumnNames(p.Schema); got != "amount, _log_offset" {
		t.Errorf("result columns %q", got)
	}
}

// Without columns a scan returns every column of the view, in order.
func TestResolveAllColumns(t *testing.T) {
	p, err := Resolve(testTable(t), protocol.ViewLog, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ColumnNames(p.Schema); got != "id, name, amount" || p.Filter != nil {
		t.Errorf("result columns %q, filter %v", got, p.Filter)
	}
}

func TestResolveRefusesBadColumns(t *testing.T) {
	info := testTable(t)
	if _, err := Resolve(info, protocol.ViewLog, []string{"nope"}, nil); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown column: %v", err)
	}
	if _, err := Resolve(info, protocol.ViewLog, []string{"id", "id"}, nil); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("column projected twice: %v", err)
	}
	// The changelog's system columns are not the log view's.
	if _, err := Resolve(info, protocol.ViewLog, []string{ColLogOffset}, nil); !errs.Is(err, errs.NotFound) {
		t.Errorf("system column of another view: %v", err)
	}
}
