package scanread

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A union read resumed at lake_start skips the lake rows below it: those at
// or after it stay, in order, whether that is all, some or none of a batch,
// and a batch it slices is released (the checked allocator ends empty).
func TestSkipBelow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "__offset", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for _, tc := range []struct {
		from int64
		want []int64
	}{
		{from: 0, want: []int64{3, 4, 7, 9}},
		{from: 4, want: []int64{4, 7, 9}},
		{from: 5, want: []int64{7, 9}},
		{from: 10, want: []int64{}},
	} {
		b := array.NewInt64Builder(mem)
		b.AppendValues([]int64{3, 4, 7, 9}, nil)
		col := b.NewArray()
		b.Release()
		rec := array.NewRecordBatch(schema, []arrow.Array{col}, 4)
		col.Release()
		got := skipBelow(rec, 0, tc.from)
		if offs := got.Column(0).(*array.Int64).Int64Values(); !slices.Equal(offs, tc.want) {
			t.Errorf("from %d: offsets %v, want %v", tc.from, offs, tc.want)
		}
		got.Release()
	}
}
