package partition

import (
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

func groupBatch(t *testing.T, rows string) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "day", Type: arrow.PrimitiveTypes.Int32},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	rec, _, err := array.RecordFromJSON(memtest.Allocator(t), schema, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Release)
	return rec
}

// Rows are grouped by all their partition values, the groups in the order
// their first row appears.
func TestGroupRowsInOrderOfFirstRow(t *testing.T) {
	rec := groupBatch(t, `[{"region": "eu", "day": 1, "v": 0}, {"region": "us", "day": 1, "v": 1},
		{"region": "eu", "day": 2, "v": 2}, {"region": "eu", "day": 1, "v": 3}]`)
	groups, err := GroupRows("db.t", []string{"region", "day"}, rec)
	if err != nil {
		t.Fatal(err)
	}
	want := []Group{{Values: []string{"eu", "1"}, Rows: []int32{0, 3}}, {Values: []string{"us", "1"}, Rows: []int32{1}}, {Values: []string{"eu", "2"}, Rows: []int32{2}}}
	if len(groups) != len(want) {
		t.Fatalf("%d groups, want %d", len(groups), len(want))
	}
	for i, g := range groups {
		if !slices.Equal(g.Values, want[i].Values) || !slices.Equal(g.Rows, want[i].Rows) {
			t.Errorf("group %d is %v rows %v, want %v rows %v", i, g.Values, g.Rows, want[i].Values, want[i].Rows)
		}
	}
}

// A batch without a partition key column, or with a NULL in one, is
// INVALID_ARGUMENT naming the column.
func TestGroupRowsRefusesMissingAndNullKeys(t *testing.T) {
	rec := groupBatch(t, `[{"region": "eu", "day": 1, "v": 0}, {"region": null, "day": 1, "v": 1}]`)
	for _, tc := range []struct {
		keys []string
		want string
	}{
		{[]string{"zone"}, `table db.t: the batch lacks partition key column "zone"`},
		{[]string{"region"}, `partition key column "region" is NULL`},
	} {
		_, err := GroupRows("db.t", tc.keys, rec)
		if !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("keys %v: %v, want INVALID_ARGUMENT with %q", tc.keys, err, tc.want)
		}
	}
}
