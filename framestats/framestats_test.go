package framestats

import (
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

func TestDecode(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := goldenBatch(mem)
	defer rec.Release()
	types := make([]arrow.DataType, rec.NumCols())
	for i, f := range goldenSchema.Fields() {
		types[i] = f.Type
	}
	block := Compute(rec)

	if s, err := Decode(nil, types); s != nil || err != nil {
		t.Errorf("Decode(nil) = %v, %v; want nil, nil", s, err)
	}
	// A batch written before columns were added: its columns get statistics,
	// the added ones none.
	if wider, err := Decode(block, append(slices.Clone(types), arrow.BinaryTypes.String)); err != nil || len(wider) != len(types) {
		t.Errorf("Decode with an added column: %d statistics (%v), want %d", len(wider), err, len(types))
	}

	strs := make([]arrow.DataType, len(types))
	for i := range strs {
		strs[i] = arrow.BinaryTypes.String
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
		{"other types", block, strs},
		{"flags", []byte{1, 1, 4, 0}, types[:1]},
		{"min above max", []byte{1, 1, 3, 0, 1, 1, 1, 0}, []arrow.DataType{arrow.PrimitiveTypes.Int8}},
		{"bound on a list", []byte{1, 1, 1, 0, 1, 0}, []arrow.DataType{arrow.ListOf(arrow.PrimitiveTypes.Int8)}},
		{"null count overflow", []byte{1, 1, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, types[:1]},
	} {
		if _, err := Decode(bad.block, bad.types); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", bad.name, err)
		}
	}
}

// TestStatsEdges covers Compute's special cases: NaNs, negative zero,
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
		stats, err := Decode(Compute(rec), []arrow.DataType{tc.typ})
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

// TestView checks a reader's view of a frame's statistics: lead columns
// unknown, the frame's own, and columns added since all NULL.
func TestView(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := goldenBatch(mem)
	defer rec.Release()
	types := make([]arrow.DataType, 0, rec.NumCols()+1)
	for _, f := range goldenSchema.Fields() {
		types = append(types, f.Type)
	}
	types = append(types, arrow.BinaryTypes.String) // added after the frame
	view := View(Compute(rec), types, int(rec.NumRows()), 2)
	if len(view) != 2+len(types) {
		t.Fatalf("%d columns in the view, want %d", len(view), 2+len(types))
	}
	for i, c := range view[:2] {
		if c != (Column{}) {
			t.Errorf("lead column %d: %+v, want nothing known", i, c)
		}
	}
	if c := view[2]; c.Min != int8(-5) || c.Max != int8(4) {
		t.Errorf("first column: %+v", c)
	}
	if c := view[len(view)-1]; c != (Column{NullCount: rec.NumRows()}) {
		t.Errorf("added column: %+v, want all %d rows NULL", c, rec.NumRows())
	}
	for _, block := range [][]byte{nil, {9}} {
		if v := View(block, types, 10, 2); v != nil {
			t.Errorf("View(%v) = %+v, want nil (nothing known)", block, v)
		}
	}
}
