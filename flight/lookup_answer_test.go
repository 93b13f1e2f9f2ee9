package flight

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Slices stay under the limit when the rows' sizes are skewed: the average
// row puts the large rows together in one slice, which is halved until each
// part fits (or is one row). Together they are the answer, in order.
func TestAnswerSlicesOfSkewedRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{{Name: "_key_index", Type: arrow.PrimitiveTypes.Int32}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil))
	const small, large, limit = 1000, 5, 3 << 20
	for i := range small + large {
		b.Field(0).(*array.Int32Builder).Append(int32(i))
		if i < small {
			b.Field(1).(*array.StringBuilder).Append("x")
		} else {
			b.Field(1).(*array.StringBuilder).Append(strings.Repeat("y", 3<<19)) // 1.5 MiB
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	slices, err := answerSlices(rec, limit, mem)
	if err != nil {
		t.Fatal(err)
	}
	next := int32(0)
	for i, sl := range slices {
		n, err := bodyBytes(sl, mem)
		if err != nil {
			t.Fatal(err)
		}
		if n > limit+64 && sl.NumRows() > 1 {
			t.Errorf("slice %d: %d rows of %d bytes, over the limit", i, sl.NumRows(), n)
		}
		idx := sl.Column(0).(*array.Int32)
		for r := range idx.Len() {
			if idx.Value(r) != next {
				t.Fatalf("slice %d row %d: key index %d, want %d", i, r, idx.Value(r), next)
			}
			next++
		}
		sl.Release()
	}
	if next != small+large || len(slices) < 4 {
		t.Errorf("%d slices of %d rows; want the %d rows, the large ones apart", len(slices), next, small+large)
	}
}
