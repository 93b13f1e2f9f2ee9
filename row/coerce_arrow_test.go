package row_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/row"
)

func TestConformTypes(t *testing.T) {
	ts := func(u arrow.TimeUnit, zone string) arrow.DataType {
		return &arrow.TimestampType{Unit: u, TimeZone: zone}
	}
	for _, c := range []struct {
		name      string
		want, got arrow.DataType
		json      string
		out       string // the converted column's values; "" when refused
	}{
		{"large_string", arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, `["a", null]`, `["a",null]`},
		{"string_view", arrow.BinaryTypes.String, arrow.BinaryTypes.StringView, `["a", "a long string past the inline twelve"]`, `["a","a long string past the inline twelve"]`},
		{"large_binary", arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeBinary, `["AQI="]`, `["AQI="]`},
		{"binary_view", arrow.BinaryTypes.Binary, arrow.BinaryTypes.BinaryView, `["AQI="]`, `["AQI="]`},
		{"finer timestamp, whole", ts(arrow.Microsecond, ""), ts(arrow.Nanosecond, ""), `[1000]`, `["1970-01-01T00:00:00.000001"]`},
		{"finer timestamp, fractional", ts(arrow.Microsecond, ""), ts(arrow.Nanosecond, ""), `[1001]`, ""},
		{"coarser timestamp", ts(arrow.Microsecond, ""), ts(arrow.Second, ""), `[1]`, `["1970-01-01T00:00:01"]`},
		{"another zone", ts(arrow.Millisecond, "UTC"), ts(arrow.Millisecond, "Asia/Tokyo"), `[0]`, `["1970-01-01T00:00:00Z"]`},
		{"zone on a column without", ts(arrow.Millisecond, ""), ts(arrow.Millisecond, "UTC"), `[0]`, ""},
		{"no zone on a column with one", ts(arrow.Millisecond, "UTC"), ts(arrow.Millisecond, ""), `[0]`, ""},
		{"time64 for time32", arrow.FixedWidthTypes.Time32ms, arrow.FixedWidthTypes.Time64ns, `[1000000]`, `["00:00:00.001"]`},
		{"large_list", arrow.ListOf(arrow.BinaryTypes.String), arrow.LargeListOf(arrow.BinaryTypes.LargeString), `[["a"], null, [], ["b", "c"]]`, `[["a"],null,[],["b","c"]]`},
		{"list of large_list", arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)), arrow.LargeListOf(arrow.LargeListOf(arrow.PrimitiveTypes.Int64)), `[[[1], [2, 3]], [[]]]`, `[[[1],[2,3]],[[]]]`},
		{"nullable element for NOT NULL", arrow.ListOfNonNullable(arrow.BinaryTypes.String), arrow.LargeListOf(arrow.BinaryTypes.String), `[["a"]]`, ""},
		{"struct with a large_list field", arrow.StructOf(arrow.Field{Name: "x", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}),
			arrow.StructOf(arrow.Field{Name: "x", Type: arrow.LargeListOf(arrow.BinaryTypes.String), Nullable: true}), `[{"x": ["a"]}]`, ""},
		{"nullable field for NOT NULL", arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.String}),
			arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.LargeString, Nullable: true}), `[{"x": "a"}]`, ""},
		{"struct", arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}),
			arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.StringView, Nullable: true}), `[{"x": "a"}]`, `[{"x":"a"}]`},
		{"struct of other names", arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}),
			arrow.StructOf(arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true}), `[{"y": "a"}]`, ""},
		{"narrower integer", arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, `[1]`, ""},
		{"string for binary", arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeString, `["a"]`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			in := arrow.NewSchema([]arrow.Field{{Name: "c", Type: c.got, Nullable: true}}, nil)
			rec, _, err := array.RecordFromJSON(mem, in, strings.NewReader(`[`+rowsJSON(c.json)+`]`))
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Release()
			want := func(string) (arrow.DataType, bool) { return c.want, true }
			out, err := row.ConformTypes(t.Context(), mem, rec, want)
			accepted := row.Accepts(c.want, c.got)
			switch {
			case c.out == "" && accepted:
				if !errs.Is(err, errs.InvalidArgument) {
					t.Fatalf("got %v, want an Invalid error for a value the column cannot hold", err)
				}
				return
			case c.out == "":
				if err != nil {
					t.Fatal(err)
				}
				defer out.Release()
				if out != rec {
					t.Fatalf("a refused type was converted to %s", out.Schema())
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			defer out.Release()
			if !arrow.TypeEqual(out.Schema().Field(0).Type, c.want) {
				t.Fatalf("converted to %s, want %s", out.Schema().Field(0).Type, c.want)
			}
			if got, _ := out.Column(0).MarshalJSON(); strings.ReplaceAll(string(got), "\n", "") != c.out {
				t.Fatalf("values %s, want %s", got, c.out)
			}
		})
	}
}

// rowsJSON turns a JSON array of values into rows of column "c".
func rowsJSON(values string) string {
	var arr []string
	depth, start := 0, 1
	for i, r := range values {
		switch r {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		}
		if (r == ',' && depth == 1) || (r == ']' && depth == 0) {
			arr = append(arr, `{"c": `+strings.TrimSpace(values[start:i])+`}`)
			start = i + 1
		}
	}
	return strings.Join(arr, ",")
}

// A batch already of the table's types is passed through, not copied.
func TestConformTypesKeepsMatchingBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in := arrow.NewSchema([]arrow.Field{{Name: "c", Type: arrow.BinaryTypes.String}}, nil)
	rec, _, err := array.RecordFromJSON(mem, in, strings.NewReader(`[{"c": "a"}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	out, err := row.ConformTypes(t.Context(), mem, rec, func(string) (arrow.DataType, bool) { return arrow.BinaryTypes.String, true })
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if out != rec {
		t.Fatal("a batch of the table's types was rebuilt")
	}
}

// A slice of a large_list (a batch cut by the client's size limit) converts
// the rows of the slice only.
func TestConformTypesSlicedLargeList(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in := arrow.NewSchema([]arrow.Field{{Name: "c", Type: arrow.LargeListOf(arrow.BinaryTypes.LargeString), Nullable: true}}, nil)
	rec, _, err := array.RecordFromJSON(mem, in, strings.NewReader(`[{"c": ["a"]}, {"c": null}, {"c": ["b", "c"]}, {"c": ["d"]}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	slice := rec.NewSlice(1, 3)
	defer slice.Release()
	want := arrow.ListOf(arrow.BinaryTypes.String)
	out, err := row.ConformTypes(t.Context(), mem, slice, func(string) (arrow.DataType, bool) { return want, true })
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got, _ := out.Column(0).MarshalJSON(); strings.ReplaceAll(string(got), "\n", "") != `[null,["b","c"]]` {
		t.Fatalf("values %s", got)
	}
	if err := out.Column(0).(*array.List).ValidateFull(); err != nil {
		t.Fatal(err)
	}
}
