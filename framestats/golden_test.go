package framestats

import (
	"bytes"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/row"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/v1.hex from Compute (only for a deliberate format change)")

// goldenSchema has a column of every type the block bounds, and ones it
// does not (binary, all null).
var goldenSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i8", Type: arrow.PrimitiveTypes.Int8},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "long", Type: arrow.BinaryTypes.LargeString},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32},
	{Name: "t", Type: arrow.FixedWidthTypes.Time32ms},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
	{Name: "tsz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	{Name: "bin", Type: arrow.BinaryTypes.Binary},
	{Name: "none", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// goldenBatch is a fixed batch of goldenSchema.
func goldenBatch(mem memory.Allocator) arrow.RecordBatch {
	bld := array.NewRecordBuilder(mem, goldenSchema)
	defer bld.Release()
	for i := range int64(10) {
		var i32, f64, s any = int32(i * 1000), float64(i) / 4, []string{"kiwi", "apple", "fig"}[i%3]
		if i == 3 {
			i32, s = nil, nil
		}
		if i == 7 {
			f64 = math.NaN()
		}
		row.AppendRow(bld, row.Row{
			int8(i - 5), int16(-i * 300), i32, i*1_000_000_007 - 3, float32(i) - 4.5, f64,
			decimal128.FromI64(i*1234 - 5000), s, strings.Repeat("z", 60) + strings.Repeat("y", int(i)), i%2 == 0,
			arrow.Date32(19000 + i), arrow.Time32(i * 3_600_000), arrow.Timestamp(1_700_000_000_000_000 + i),
			arrow.Timestamp(-i), []byte{byte(i)}, nil,
		})
	}
	return bld.NewRecordBatch()
}

// TestFormatV1 pins the block's bytes: Compute writes exactly the checked-in
// block of a fixed batch (frames already on disk were written so), and
// Decode reads that block back to the batch's bounds.
func TestFormatV1(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := goldenBatch(mem)
	defer rec.Release()
	got := Compute(rec)
	if *rewrite {
		if err := os.WriteFile("testdata/v1.hex", []byte(hex.EncodeToString(got)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text, err := os.ReadFile("testdata/v1.hex")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := hex.DecodeString(strings.TrimSpace(string(text)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, golden) {
		t.Errorf("Compute wrote\n%x\nthe checked-in version 1 block is\n%x", got, golden)
	}

	types := make([]arrow.DataType, rec.NumCols())
	for i, f := range goldenSchema.Fields() {
		types[i] = f.Type
	}
	stats, err := Decode(golden, types)
	if err != nil {
		t.Fatal(err)
	}
	want := []Column{
		{0, int8(-5), int8(4)},
		{0, int16(-2700), int16(0)},
		{1, int32(0), int32(9000)},
		{0, int64(-3), int64(9_000_000_060)},
		{0, float32(-4.5), float32(4.5)},
		{0, float64(0), math.NaN()},
		{0, decimal128.FromI64(-5000), decimal128.FromI64(6106)},
		{1, "apple", "kiwi"},
		{0, strings.Repeat("z", 60), strings.Repeat("z", 60) + "yyyz"},
		{0, false, true},
		{0, arrow.Date32(19000), arrow.Date32(19009)},
		{0, arrow.Time32(0), arrow.Time32(9 * 3_600_000)},
		{0, arrow.Timestamp(1_700_000_000_000_000), arrow.Timestamp(1_700_000_000_000_009)},
		{0, arrow.Timestamp(-9), arrow.Timestamp(0)},
		{0, nil, nil},
		{10, nil, nil},
	}
	if len(stats) != len(want) {
		t.Fatalf("%d columns decoded, want %d", len(stats), len(want))
	}
	for i, w := range want {
		g := stats[i]
		if g.NullCount != w.NullCount || !sameValue(types[i], g.Min, w.Min) || !sameValue(types[i], g.Max, w.Max) {
			t.Errorf("column %s: %+v, want %+v", goldenSchema.Field(i).Name, g, w)
		}
	}
}
