package tablelookup

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/catalog/catalogtest"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// testTable creates the table of spec (by default events: id BIGINT
// primary key, name STRING) in a catalog of its own.
func testTable(t *testing.T, spec ...catalog.TableSpec) *catalog.TableInfo {
	t.Helper()
	s := catalog.TableSpec{
		Table:      "events",
		Columns:    []catalog.Column{{Name: "id", Type: "BIGINT"}, {Name: "name", Type: "STRING"}},
		PrimaryKey: []string{"id"},
	}
	if len(spec) > 0 {
		s = spec[0]
	}
	return catalogtest.Table(t, catalogtest.Open(t), s)
}

// An inline lookup's JSON keys (numbers decoded as float64) become a batch
// of the key columns, coerced to their types; nothing of it is left once it
// is released.
func TestKeysBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	info := testTable(t)
	keys, err := Keys(info, info.Path(), protocol.LookupRequest{Keys: []map[string]any{{"id": float64(7)}, {"id": float64(8)}}}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Release()
	ids, ok := keys.Column(0).(*array.Int64)
	if keys.NumCols() != 1 || keys.Schema().Field(0).Name != "id" || !ok || ids.Len() != 2 || ids.Value(0) != 7 || ids.Value(1) != 8 {
		t.Fatalf("keys %v", keys)
	}
}

// A key that names another column, lacks a key column, or gives it NULL or
// a value of another type is refused as invalid.
func TestKeysRefused(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	info := testTable(t)
	for name, key := range map[string]map[string]any{
		"other column": {"id": 1, "name": "x"},
		"lacks id":     {},
		"null id":      {"id": nil},
		"string id":    {"id": "x"},
	} {
		_, err := Keys(info, info.Path(), protocol.LookupRequest{Keys: []map[string]any{key}}, mem)
		if !errs.Is(err, errs.InvalidArgument) {
			t.Errorf("%s: err %v, want invalid", name, err)
		}
	}
}
