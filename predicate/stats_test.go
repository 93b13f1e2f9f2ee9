package predicate

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fluxgate-io/fluxgate/framestats"
	"github.com/fluxgate-io/fluxgate/row"
)

// skipSchema is the schema of the batches of the skipping tests.
var skipSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "gone", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "long", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
}, nil)

// skipBatch returns a batch of skipSchema: ids from..from+99, a column of
// nulls, names from "apple" to "banana", floats 0 to 99 and a NaN, strings
// of 100 bytes, all true.
func skipBatch(mem memory.Allocator, from int64) arrow.RecordBatch {
	bld := array.NewRecordBuilder(mem, skipSchema)
	defer bld.Release()
	names := []string{"apple", "apricot", "avocado", "banana"}
	for i := range int64(100) {
		var f any = float64(i)
		if i == 50 {
			f = math.NaN()
		}
		row.AppendRow(bld, row.Row{from + i, nil, names[i%4], f, strings.Repeat("m", 99) + string(rune('a'+i%3)), true, []byte("x")})
	}
	return bld.NewRecordBatch()
}

func TestMayMatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := skipBatch(mem, 0)
	defer rec.Release()
	types := make([]arrow.DataType, rec.NumCols())
	for i, f := range skipSchema.Fields() {
		types[i] = f.Type
	}
	block := framestats.Compute(rec)
	stats, err := framestats.Decode(block, types)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("statistics block of %d bytes: %+v", len(block), stats)

	long := strings.Repeat("m", 99)
	for _, tc := range []struct {
		filter string
		may    bool
	}{
		{`{"gt": ["id", 150]}`, false},
		{`{"gt": ["id", 98]}`, true},
		{`{"ge": ["id", 99]}`, true},
		{`{"gt": ["id", 99]}`, false},
		{`{"lt": ["id", 0]}`, false},
		{`{"le": ["id", 0]}`, true},
		{`{"eq": ["id", 100]}`, false},
		{`{"eq": ["id", 42]}`, true},
		{`{"ne": ["id", 42]}`, true},
		{`{"in": ["id", [200, 300, -1]]}`, false},
		{`{"in": ["id", [200, 5]]}`, true},
		{`{"not_in": ["id", [5]]}`, true},
		{`{"not": {"ge": ["id", 0]}}`, false},   // every id is >= 0
		{`{"not": {"lt": ["id", 100]}}`, false}, // every id is < 100
		{`{"not": {"lt": ["id", 99]}}`, true},   // id 99 is not
		{`{"or": [{"gt": ["id", 150]}, {"lt": ["id", 0]}]}`, false},
		{`{"and": [{"gt": ["id", 150]}, {"ge": ["id", 0]}]}`, false},
		{`{"and": [{"gt": ["id", 50]}, {"lt": ["id", 10]}]}`, true}, // sound, not exact: ranges are not intersected
		{`{"is_null": "id"}`, false},
		{`{"is_not_null": "id"}`, true},
		{`{"not": {"is_not_null": "id"}}`, false},

		// A column of NULLs: every comparison is NULL, and so is its negation.
		{`{"eq": ["gone", 1]}`, false},
		{`{"not": {"eq": ["gone", 1]}}`, false},
		{`{"not_in": ["gone", [1]]}`, false},
		{`{"is_null": "gone"}`, true},
		{`{"is_not_null": "gone"}`, false},
		{`{"or": [{"eq": ["gone", 1]}, {"eq": ["id", 3]}]}`, true},
		{`{"and": [{"not": {"eq": ["gone", 1]}}, {"eq": ["id", 3]}]}`, false},
		{`{"not": {"and": [{"eq": ["gone", 1]}, {"eq": ["id", 300]}]}}`, true}, // NULL AND false is false

		// Strings.
		{`{"starts_with": ["name", "c"]}`, false},
		{`{"starts_with": ["name", "b"]}`, true},
		{`{"starts_with": ["name", "ap"]}`, true},
		{`{"starts_with": ["name", "aa"]}`, false},
		{`{"starts_with": ["name", "bananas"]}`, false},
		{`{"not": {"starts_with": ["name", ""]}}`, false},
		{`{"lt": ["name", "apple"]}`, false},
		{`{"gt": ["name", "banana"]}`, false},

		// Floats: NaN is above everything.
		{`{"gt": ["f", 1e300]}`, true},
		{`{"lt": ["f", -1]}`, false},
		{`{"lt": ["f", 0.5]}`, true},

		// Strings past the 64-byte cap: bounds, not values.
		{`{"eq": ["long", "` + long + `b"]}`, true},
		{`{"starts_with": ["long", "` + long + `"]}`, true},
		{`{"starts_with": ["long", "` + long + `z"]}`, true}, // the cut bounds cannot rule it out
		{`{"starts_with": ["long", "n"]}`, false},
		{`{"lt": ["long", "m"]}`, false},

		// Booleans.
		{`{"eq": ["flag", false]}`, false},
		{`{"lt": ["flag", true]}`, false},
		{`{"ge": ["flag", true]}`, true},
		{`{"not_in": ["flag", [true]]}`, false},

		// Binary columns carry no bounds.
		{`{"eq": ["bin", "y"]}`, true},
		{`{"is_null": "bin"}`, false},
	} {
		e, err := Parse([]byte(tc.filter))
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		b, err := Bind(e, skipSchema)
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		if got := b.MayMatch(rec.NumRows(), stats); got != tc.may {
			t.Errorf("MayMatch(%s) = %t, want %t", tc.filter, got, tc.may)
		}
		if !b.MayMatch(rec.NumRows(), nil) || !b.MayMatch(rec.NumRows(), stats[:1]) && b.Columns()[0] != 0 {
			t.Errorf("MayMatch(%s) without statistics = false", tc.filter)
		}
		if b.MayMatch(0, stats) {
			t.Errorf("MayMatch(%s) of an empty batch = true", tc.filter)
		}
		// Soundness on this batch too.
		mask, err := b.Filter(context.Background(), mem, rec.Column, int(rec.NumRows()))
		if err != nil {
			t.Fatal(err)
		}
		if n := countTrue(mask); n > 0 && !tc.may {
			t.Errorf("%s: %d rows match", tc.filter, n)
		}
		mask.Release()
	}
}

// TestMayMatchSortedBatches is the case batch skipping is for: a column that
// grows with the log, and a range predicate that only recent batches meet.
func TestMayMatchSortedBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e, err := Parse([]byte(`{"and": [{"ge": ["id", 1250]}, {"lt": ["id", 1420]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Bind(e, skipSchema)
	if err != nil {
		t.Fatal(err)
	}
	var kept []int64
	for from := int64(0); from < 2000; from += 100 {
		rec := skipBatch(mem, from)
		stats, err := framestats.Decode(framestats.Compute(rec), arrowTypes(skipSchema))
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		if b.MayMatch(100, stats) {
			kept = append(kept, from)
		}
	}
	if want := []int64{1200, 1300, 1400}; !equalInts(kept, want) {
		t.Errorf("batches kept: %v, want %v", kept, want)
	}
}

func arrowTypes(s *arrow.Schema) []arrow.DataType {
	types := make([]arrow.DataType, s.NumFields())
	for i, f := range s.Fields() {
		types[i] = f.Type
	}
	return types
}

func countTrue(mask *array.Boolean) int {
	n := 0
	for i := range mask.Len() {
		if mask.Value(i) {
			n++
		}
	}
	return n
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
