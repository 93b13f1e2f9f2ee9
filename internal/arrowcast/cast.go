// Package arrowcast casts an Arrow array to another type: arrow-go's safe
// cast, except for lists (and structs, which may hold lists), which it
// converts itself because arrow-go v18.8's cast of a list whose element type
// changes leaks the offsets buffer it allocates.
package arrowcast

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Cast returns arr as type want, allocated from mem; it is arr, retained,
// when the types are equal. A value want cannot hold (an integer out of
// range, a timestamp finer than its unit) is an error. The caller releases
// the result.
func Cast(ctx context.Context, mem memory.Allocator, arr arrow.Array, want arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(arr.DataType(), want) {
		arr.Retain()
		return arr, nil
	}
	switch want := want.(type) {
	case *arrow.ListType, *arrow.LargeListType:
		if l, ok := arr.(array.ListLike); ok && (arr.DataType().ID() == arrow.LIST || arr.DataType().ID() == arrow.LARGE_LIST) {
			return castList(ctx, mem, l, want.(arrow.ListLikeType))
		}
	case *arrow.StructType:
		if s, ok := arr.(*array.Struct); ok && fieldsMatch(s.DataType().(*arrow.StructType), want) {
			return castStruct(ctx, mem, s, want)
		}
	}
	return compute.CastArray(compute.WithAllocator(ctx, mem), arr, compute.SafeCastOptions(want))
}

// castList casts a list or large_list to want, a list or large_list type:
// its offsets rebased to zero in want's width, its values cast.
func castList(ctx context.Context, mem memory.Allocator, arr array.ListLike, want arrow.ListLikeType) (arrow.Array, error) {
	n := arr.Len()
	var start, end int64
	if n > 0 {
		start, _ = arr.ValueOffsets(0)
		_, end = arr.ValueOffsets(n - 1)
	}
	large := want.ID() == arrow.LARGE_LIST
	if !large && end-start > math.MaxInt32 {
		return nil, fmt.Errorf("%d list values do not fit a list's 32-bit offsets", end-start)
	}
	values := array.NewSlice(arr.ListValues(), start, end)
	defer values.Release()
	elems, err := Cast(ctx, mem, values, want.Elem())
	if err != nil {
		return nil, err
	}
	defer elems.Release()
	offsets := memory.NewResizableBuffer(mem)
	defer offsets.Release()
	if large {
		offsets.Resize(arrow.Int64Traits.BytesRequired(n + 1))
		o := arrow.Int64Traits.CastFromBytes(offsets.Bytes())
		for i := range n {
			s, _ := arr.ValueOffsets(i)
			o[i] = s - start
		}
		o[n] = end - start
	} else {
		offsets.Resize(arrow.Int32Traits.BytesRequired(n + 1))
		o := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
		for i := range n {
			s, _ := arr.ValueOffsets(i)
			o[i] = int32(s - start)
		}
		o[n] = int32(end - start)
	}
	validity := copyValidity(mem, arr)
	if validity != nil {
		defer validity.Release()
	}
	data := array.NewData(want, n, []*memory.Buffer{validity, offsets}, []arrow.ArrayData{elems.Data()}, arr.NullN(), 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// castStruct casts a struct to want, a struct type of the same field names,
// field by field.
func castStruct(ctx context.Context, mem memory.Allocator, arr *array.Struct, want *arrow.StructType) (arrow.Array, error) {
	children := make([]arrow.ArrayData, 0, want.NumFields())
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	for i, f := range want.Fields() {
		c, err := Cast(ctx, mem, arr.Field(i), f.Type)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		children = append(children, c.Data())
		c.Data().Retain()
		c.Release()
	}
	validity := copyValidity(mem, arr)
	if validity != nil {
		defer validity.Release()
	}
	data := array.NewData(want, arr.Len(), []*memory.Buffer{validity}, children, arr.NullN(), 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// fieldsMatch reports whether a struct of type from casts to want field by
// field: the same names in the same order, and no nullable field for a NOT
// NULL one (which arrow-go's cast refuses). Other structs are left to
// arrow-go, whose cast also picks fields by name.
func fieldsMatch(from, want *arrow.StructType) bool {
	if from.NumFields() != want.NumFields() {
		return false
	}
	for i, f := range from.Fields() {
		w := want.Field(i)
		if f.Name != w.Name || f.Nullable && !w.Nullable {
			return false
		}
	}
	return true
}

// copyValidity copies arr's validity bitmap to a buffer of its own starting
// at bit 0, or returns nil when arr has no nulls.
func copyValidity(mem memory.Allocator, arr arrow.Array) *memory.Buffer {
	if arr.NullN() == 0 {
		return nil
	}
	n := arr.Len()
	validity := memory.NewResizableBuffer(mem)
	validity.Resize(int(bitutil.BytesForBits(int64(n))))
	bitutil.CopyBitmap(arr.NullBitmapBytes(), arr.Data().Offset(), n, validity.Bytes(), 0)
	return validity
}
