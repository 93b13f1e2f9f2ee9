package framestats

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Merging the blocks of two batches gives the block of the two together.
func TestMerge(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	build := func(ns []int64, ss []string, valid []bool) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).AppendValues(ns, valid)
		b.Field(1).(*array.StringBuilder).AppendValues(ss, valid)
		return b.NewRecordBatch()
	}
	a := build([]int64{5, -3, 0}, []string{"m", "b", "x"}, []bool{true, true, false})
	defer a.Release()
	b := build([]int64{-7, 2}, []string{"c", "z"}, nil)
	defer b.Release()
	both := build([]int64{5, -3, 0, -7, 2}, []string{"m", "b", "x", "c", "z"}, []bool{true, true, false, true, true})
	defer both.Release()

	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String}
	got, err := Decode(Merge(Compute(a), Compute(b)), types)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Decode(Compute(both), types)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("column %d: merged %+v, want %+v", i, got[i], want[i])
		}
	}
	if Merge(Compute(a), nil) != nil || Merge([]byte{9}, Compute(a)) != nil {
		t.Fatal("merging with a missing or foreign block is not unknown")
	}
}
