package predicate

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
	block := ComputeStats(rec)
	stats, err := DecodeStats(block, types)
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
		stats, err := DecodeStats(ComputeStats(rec), arrowTypes(skipSchema))
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

func TestDecodeStats(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := skipBatch(mem, 0)
	defer rec.Release()
	types := arrowTypes(skipSchema)
	block := ComputeStats(rec)

	if s, err := DecodeStats(nil, types); s != nil || err != nil {
		t.Errorf("DecodeStats(nil) = %v, %v; want nil, nil", s, err)
	}
	stats, err := DecodeStats(block, types)
	if err != nil {
		t.Fatal(err)
	}
	want := []ColumnStats{
		{0, int64(0), int64(99)},
		{100, nil, nil},
		{0, "apple", "banana"},
		{0, float64(0), math.NaN()},
		{0, strings.Repeat("m", 64), strings.Repeat("m", 63) + "n"},
		{0, true, true},
		{0, nil, nil},
	}
	for i, w := range want {
		g := stats[i]
		if g.NullCount != w.NullCount || !sameValue(types[i], g.Min, w.Min) || !sameValue(types[i], g.Max, w.Max) {
			t.Errorf("column %d: %+v, want %+v", i, g, w)
		}
	}

	// A batch written before columns were added: its columns get statistics,
	// the added ones none.
	if wider, err := DecodeStats(block, append(slices.Clone(types), arrow.BinaryTypes.String)); err != nil || len(wider) != len(types) {
		t.Errorf("DecodeStats with an added column: %d statistics (%v), want %d", len(wider), err, len(types))
	}

	for _, bad := range []struct {
		name  string
		block []byte
		types []arrow.DataType
	}{
		{"version", append([]byte{2}, block[1:]...), types},
		{"fewer types", block, types[:3]},
		{"truncated", block[:len(block)-1], types},
		{"trailing", append(block[:len(block):len(block)], 0), types},
		{"other types", block, []arrow.DataType{arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String,
			arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String, arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.Binary}},
		{"flags", []byte{1, 1, 4, 0}, types[:1]},
		{"min above max", []byte{1, 1, 3, 0, 1, 1, 1, 0}, []arrow.DataType{arrow.PrimitiveTypes.Int8}},
		{"bound on a list", []byte{1, 1, 1, 0, 1, 0}, []arrow.DataType{arrow.ListOf(arrow.PrimitiveTypes.Int8)}},
		{"null count overflow", []byte{1, 1, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, types[:1]},
	} {
		if _, err := DecodeStats(bad.block, bad.types); !errors.Is(err, ErrCorruptStats) {
			t.Errorf("%s: error %v, want ErrCorruptStats", bad.name, err)
		}
	}
}

// TestStatsEdges covers ComputeStats's special cases: NaNs, negative zero,
// long strings, empty and sliced arrays.
func TestStatsEdges(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	nan := math.NaN()
	ff := strings.Repeat("\xff", 70)
	for _, tc := range []struct {
		typ    arrow.DataType
		vals   []any
		lo, hi any
	}{
		{arrow.PrimitiveTypes.Float64, []any{nan, nan, nil}, nan, nan},
		{arrow.PrimitiveTypes.Float64, []any{nan, 2.0, -1.0}, -1.0, nan},
		{arrow.PrimitiveTypes.Float64, []any{nil, nan, 2.0, -1.0}, -1.0, nan},
		{arrow.PrimitiveTypes.Float32, []any{float32(1), float32(math.Inf(-1))}, float32(math.Inf(-1)), float32(1)},
		{arrow.PrimitiveTypes.Float64, []any{math.Copysign(0, -1), 0.0}, 0.0, 0.0},
		{arrow.BinaryTypes.String, []any{ff, "a"}, "a", nil}, // no string above every one that starts with 64 0xff bytes
		{arrow.BinaryTypes.String, []any{strings.Repeat("é", 40)}, strings.Repeat("é", 32), strings.Repeat("é", 31) + "ê"},
		{arrow.BinaryTypes.String, []any{strings.Repeat("日", 30)}, strings.Repeat("日", 21), strings.Repeat("日", 21) + "\xe7"}, // the minimum is cut at a rune
		{arrow.BinaryTypes.LargeString, []any{"b", nil, "a"}, "a", "b"},
		{arrow.PrimitiveTypes.Int8, []any{nil, int8(-128), int8(127)}, int8(-128), int8(127)},
		{arrow.FixedWidthTypes.Boolean, []any{nil, false}, false, false},
		{arrow.PrimitiveTypes.Int32, []any{}, nil, nil},
	} {
		bld := array.NewBuilder(mem, tc.typ)
		row.Append(bld, int8or(tc.typ, 5)) // a value sliced away
		for _, v := range tc.vals {
			row.Append(bld, v)
		}
		full := bld.NewArray()
		bld.Release()
		arr := array.NewSlice(full, 1, int64(full.Len()))
		full.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "c", Type: tc.typ, Nullable: true}}, nil)
		rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
		arr.Release()
		stats, err := DecodeStats(ComputeStats(rec), []arrow.DataType{tc.typ})
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		if !sameValue(tc.typ, stats[0].Min, tc.lo) || !sameValue(tc.typ, stats[0].Max, tc.hi) {
			t.Errorf("%s %q: bounds %#v, %#v; want %#v, %#v", tc.typ, tc.vals, stats[0].Min, stats[0].Max, tc.lo, tc.hi)
		}
	}
}

// int8or returns a value of type t for the tests' leading slot.
func int8or(t arrow.DataType, n int) any {
	switch t.ID() {
	case arrow.FLOAT64:
		return -1e300
	case arrow.FLOAT32:
		return float32(-1e30)
	case arrow.STRING, arrow.LARGE_STRING:
		return ""
	case arrow.BOOL:
		return true
	case arrow.INT8:
		return int8(n)
	case arrow.INT32:
		return int32(n)
	}
	return nil
}

func sameValue(t arrow.DataType, a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return row.Compare(t, a, b) == 0
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
