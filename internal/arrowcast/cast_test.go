package arrowcast

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Every cast, lists and lists in structs above all (whose element type
// changes: arrow-go's own cast leaks its offsets there), returns the values
// in the new type and leaves nothing allocated once released, also from a
// slice.
func TestCastLeavesNothingAllocated(t *testing.T) {
	i32, i64 := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64
	str, large := arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString
	structOf := func(elem arrow.DataType) arrow.DataType {
		return arrow.StructOf(arrow.Field{Name: "x", Type: arrow.ListOf(elem), Nullable: true}, arrow.Field{Name: "y", Type: i32, Nullable: true})
	}
	for _, c := range []struct {
		name     string
		from, to arrow.DataType
		in, want string
	}{
		{"list of int to wider", arrow.ListOf(i32), arrow.ListOf(i64), `[[1, 2], null, [], [3]]`, `[[1,2],null,[],[3]]`},
		{"large_list to list", arrow.LargeListOf(large), arrow.ListOf(str), `[["a"], null, ["b", "c"]]`, `[["a"],null,["b","c"]]`},
		{"list to large_list", arrow.ListOf(i32), arrow.LargeListOf(i64), `[[1], null, [2, 3]]`, `[[1],null,[2,3]]`},
		{"list of lists", arrow.ListOf(arrow.ListOf(i32)), arrow.ListOf(arrow.ListOf(i64)), `[[[1], [2, 3]], [[]], null]`, `[[[1],[2,3]],[[]],null]`},
		{"struct with a list", structOf(i32), structOf(i64), `[{"x": [1], "y": 1}, null, {"x": null, "y": 2}]`, `[{"x":[1],"y":1},null,{"x":null,"y":2}]`},
		{"scalar", i32, i64, `[1, null, 3]`, `[1,null,3]`},
		{"equal types", arrow.ListOf(i64), arrow.ListOf(i64), `[[1], null]`, `[[1],null]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, sliced := range []bool{false, true} {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				in, _, err := array.FromJSON(mem, c.from, strings.NewReader(c.in))
				if err != nil {
					t.Fatal(err)
				}
				want := c.want
				if sliced {
					// The first row cut off: its values stay in the arrays underneath.
					s := array.NewSlice(in, 1, int64(in.Len()))
					in.Release()
					in = s
					w, _, err := array.FromJSON(mem, c.to, strings.NewReader(c.want))
					if err != nil {
						t.Fatal(err)
					}
					ws := array.NewSlice(w, 1, int64(w.Len()))
					b, _ := ws.MarshalJSON()
					want = oneLine(b)
					ws.Release()
					w.Release()
				}
				out, err := Cast(t.Context(), mem, in, c.to)
				in.Release()
				if err != nil {
					t.Fatal(err)
				}
				if !arrow.TypeEqual(out.DataType(), c.to) {
					t.Fatalf("cast to %s made %s", c.to, out.DataType())
				}
				if v, ok := out.(interface{ ValidateFull() error }); ok {
					if err := v.ValidateFull(); err != nil {
						t.Fatal(err)
					}
				}
				if got, _ := out.MarshalJSON(); oneLine(got) != oneLine([]byte(want)) {
					t.Fatalf("sliced %v: got %s, want %s", sliced, got, want)
				}
				out.Release()
				mem.AssertSize(t, 0)
			}
		})
	}
}

// A value the type cannot hold is an error, and leaves nothing allocated.
func TestCastOutOfRangeIsAnError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in, _, err := array.FromJSON(mem, arrow.ListOf(arrow.PrimitiveTypes.Int64), strings.NewReader(`[[1], [4294967296]]`))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	if out, err := Cast(t.Context(), mem, in, arrow.ListOf(arrow.PrimitiveTypes.Int32)); err == nil {
		out.Release()
		t.Fatal("a BIGINT beyond INT's range was cast")
	}
}

func oneLine(b []byte) string { return strings.ReplaceAll(string(b), "\n", "") }
