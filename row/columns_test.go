package row

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A ColumnDecoder builds the same columns as DecodeTo, over batches large
// enough to grow its buffers, with NULLs, rows of an older and narrower
// schema, and a skipped column.
func TestColumnDecoderMatchesDecodeTo(t *testing.T) {
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64,
		arrow.BinaryTypes.Binary, arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int32}
	want := []bool{true, true, true, true, true, false}
	fields := make([]arrow.Field, len(types))
	for i, typ := range types {
		fields[i] = arrow.Field{Name: fmt.Sprint("c", i), Type: typ, Nullable: true}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	direct := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer direct.Release()
	to := slices.Clone(direct.Fields())
	to[5] = nil // skipped, as the decoder's want says
	dec := NewColumnDecoder(types, want, mem)
	defer dec.Release()

	for batch, rows := range []int{3000, 17, 5000} {
		var buf []byte
		for i := range rows {
			r := Row{int64(i), fmt.Sprint("s", i), float64(i) / 2, []byte{byte(i)}, i%2 == 0, int32(i)}
			if i%7 == 0 {
				r[1], r[2], r[3], r[4] = nil, nil, nil, nil
			}
			if i%11 == 0 {
				buf = Encode(buf[:0], 1, types[:2], r[:2]) // written before columns were added
			} else {
				buf = Encode(buf[:0], 2, types, r)
			}
			if err := DecodeTo(buf, types, to); err != nil {
				t.Fatal(err)
			}
			if err := dec.Decode(buf); err != nil {
				t.Fatal(err)
			}
		}
		if dec.Rows() != rows {
			t.Fatalf("batch %d: %d rows decoded, want %d", batch, dec.Rows(), rows)
		}
		got := dec.Columns()
		for i := range 5 {
			w := direct.Field(i).NewArray()
			if !array.Equal(w, got[i]) {
				t.Fatalf("batch %d, column %d:\n got %v\nwant %v", batch, i, got[i], w)
			}
			w.Release()
			got[i].Release()
		}
		if got[5] != nil {
			t.Fatalf("skipped column decoded: %v", got[5])
		}
	}
}
