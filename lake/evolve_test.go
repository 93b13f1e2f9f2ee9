package lake

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/predicate"
)

// withColumn is info with a nullable column added, as alter-table makes it.
func withColumn(t *testing.T, info *catalog.TableInfo, name, typ string) *catalog.TableInfo {
	t.Helper()
	added, err := catalog.ValidateAlter(info, nil, nil, []catalog.Column{col(name, typ, true)})
	if err != nil {
		t.Fatal(err)
	}
	return added
}

// A snapshot made before alter-table added a column reads it as NULL, right
// after the alter, before any round wrote the new schema's rows; a filter on
// the new column prunes nothing there (the caller filters exactly).
func TestSnapshotBeforeAnAddedColumn(t *testing.T) {
	ctx := context.Background()
	mem := checkedAllocator(t)
	info := usersInfo(t)
	l, lt := openLake(t, t.TempDir(), info)
	snap := commitRows(t, mem, lt, info, 0, 0, []int64{1, 2}, []string{"a", "b"}, nil)

	added := withColumn(t, info, "country", "STRING")
	lt, err := l.Ensure(ctx, added)
	if err != nil {
		t.Fatal(err)
	}
	expr, err := predicate.Parse([]byte(`{"is_null": "country"}`))
	if err != nil {
		t.Fatal(err)
	}
	filter, err := predicate.Bind(expr, added.ArrowSchema())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []*predicate.Bound{nil, filter} {
		recs, err := lt.Scan(ctx, mem, snap.ID, nil, 0, []string{"id", "country"}, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for rec, err := range recs {
			if err != nil {
				t.Fatal(err)
			}
			if rec.Schema().Field(1).Name != "country" || rec.Column(1).NullN() != int(rec.NumRows()) {
				t.Errorf("country of rows before it was added: %v, want NULLs", rec.Column(1))
			}
			ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
			rec.Release()
		}
		if !slices.Equal(ids, []int64{1, 2}) {
			t.Errorf("filter %v: ids %v, want [1 2]", f, ids)
		}
	}
}

// Adding columns keeps schema.name-mapping.default whole, so that readers
// of files without field ids (none of fluxgate's, but imported ones) find
// the new column too.
func TestNameMappingFollowsAddedColumns(t *testing.T) {
	ctx := context.Background()
	mem := checkedAllocator(t)
	info := usersInfo(t)
	l, lt := openLake(t, t.TempDir(), info)
	commitRows(t, mem, lt, info, 0, 0, []int64{1}, []string{"a"}, nil) // the first commit sets the name mapping
	lt, err := l.Ensure(ctx, withColumn(t, info, "country", "STRING"))
	if err != nil {
		t.Fatal(err)
	}
	raw := lt.Metadata().Properties()[table.DefaultNameMappingKey]
	var mapping iceberg.NameMapping
	if err := json.Unmarshal([]byte(raw), &mapping); err != nil {
		t.Fatalf("%s = %q: %v", table.DefaultNameMappingKey, raw, err)
	}
	country, _ := lt.Metadata().CurrentSchema().FindFieldByName("country")
	found := false
	for _, f := range mapping {
		if slices.Contains(f.Names, "country") {
			found = f.FieldID != nil && *f.FieldID == country.ID
		}
	}
	if !found {
		t.Errorf("%s has no country (field id %d): %s", table.DefaultNameMappingKey, country.ID, raw)
	}
}
