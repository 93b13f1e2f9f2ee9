package row

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/errs"
)

// Accepts reports whether a written column of Arrow type got carries the
// values of a table column of type want in another layout, so that it can be
// converted at intake instead of refused: what pandas and polars make by
// default for the table's types (PROTOCOL.md section 5).
//
//   - STRING takes large_string and string_view; BYTES takes large_binary
//     and binary_view.
//   - Timestamps take any unit, and any zone when the column has one (the
//     values are UTC instants either way); times take any unit. Converting to
//     a coarser unit must drop only zeros.
//   - ARRAY takes a list or large_list (polars' lists), ROW a struct with the
//     same field names, of element or field types it accepts in turn; a
//     nullable element or field is not taken for a NOT NULL one. A ROW's
//     ARRAY field takes only its own type (arrow-go converts a struct's
//     fields itself, and its list cast leaks memory).
//
// Dictionary columns never get here: the intake refuses them (send the
// values). Equal types are accepted. Other conversions (integer widths, decimal
// precisions) are not: they change what a value is.
func Accepts(want, got arrow.DataType) bool {
	if arrow.TypeEqual(want, got) {
		return true
	}
	switch want := want.(type) {
	case *arrow.StringType:
		return got.ID() == arrow.LARGE_STRING || got.ID() == arrow.STRING_VIEW
	case *arrow.BinaryType:
		return got.ID() == arrow.LARGE_BINARY || got.ID() == arrow.BINARY_VIEW
	case *arrow.TimestampType:
		g, ok := got.(*arrow.TimestampType)
		return ok && (g.TimeZone == "") == (want.TimeZone == "")
	case *arrow.Time32Type, *arrow.Time64Type:
		return got.ID() == arrow.TIME32 || got.ID() == arrow.TIME64
	case *arrow.ListType:
		g, ok := got.(arrow.ListLikeType)
		return ok && (got.ID() == arrow.LIST || got.ID() == arrow.LARGE_LIST) &&
			acceptsField(want.ElemField(), g.ElemField())
	case *arrow.StructType:
		g, ok := got.(*arrow.StructType)
		if !ok || g.NumFields() != want.NumFields() {
			return false
		}
		for i, f := range want.Fields() {
			gf := g.Field(i)
			if gf.Name != f.Name || !acceptsField(f, gf) || (f.Type.ID() == arrow.LIST && !arrow.TypeEqual(f.Type, gf.Type)) {
				return false
			}
		}
		return true
	}
	return false
}

func acceptsField(want, got arrow.Field) bool {
	return (want.Nullable || !got.Nullable) && Accepts(want.Type, got.Type)
}

// ConformTypes returns rec with every column that Accepts converts to the
// type want gives for its name; columns of an equal type, of a type not
// accepted or of a name want does not know are left as they are, for the
// caller's checks to report. When nothing needs converting, rec itself is
// returned, retained: the common case costs a type comparison per column.
// The caller releases the result. A value the conversion cannot carry (a
// timestamp finer than the column's unit) is an errs.Invalid error.
func ConformTypes(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, want func(name string) (arrow.DataType, bool)) (arrow.RecordBatch, error) {
	in := rec.Schema()
	var fields []arrow.Field // nil until a column needs converting
	for i, f := range in.Fields() {
		w, ok := want(f.Name)
		if !ok || arrow.TypeEqual(w, f.Type) || !Accepts(w, f.Type) {
			continue
		}
		if fields == nil {
			fields = append([]arrow.Field(nil), in.Fields()...)
		}
		fields[i].Type = w
	}
	if fields == nil {
		rec.Retain()
		return rec, nil
	}
	cols := make([]arrow.Array, len(fields))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range fields {
		out, err := convert(ctx, mem, rec.Column(i), f.Type)
		if err != nil {
			return nil, errs.New(errs.Invalid, "column %s: cannot convert %s to %s: %w", errs.Quote(f.Name), rec.Column(i).DataType(), f.Type, err)
		}
		cols[i] = out
	}
	md := in.Metadata()
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows()), nil
}

// convert returns arr as type want, which Accepts arr's type; it is arr,
// retained, when the types are equal.
func convert(ctx context.Context, mem memory.Allocator, arr arrow.Array, want arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(arr.DataType(), want) {
		arr.Retain()
		return arr, nil
	}
	if l, ok := want.(*arrow.ListType); ok {
		return convertList(ctx, mem, arr.(array.ListLike), l)
	}
	return compute.CastArray(compute.WithAllocator(ctx, mem), arr, compute.SafeCastOptions(want))
}

// convertList converts a list or large_list to want, its offsets rebased to
// zero and narrowed, its values converted: arrow-go v18.8's list cast leaks
// the offsets buffer it allocates.
func convertList(ctx context.Context, mem memory.Allocator, arr array.ListLike, want *arrow.ListType) (arrow.Array, error) {
	n := arr.Len()
	var start, end int64
	if n > 0 {
		start, _ = arr.ValueOffsets(0)
		_, end = arr.ValueOffsets(n - 1)
	}
	if end-start > math.MaxInt32 {
		return nil, fmt.Errorf("%d list values do not fit a list's 32-bit offsets", end-start)
	}
	values := array.NewSlice(arr.ListValues(), start, end)
	defer values.Release()
	elems, err := convert(ctx, mem, values, want.Elem())
	if err != nil {
		return nil, err
	}
	defer elems.Release()
	offsets := memory.NewResizableBuffer(mem)
	defer offsets.Release()
	offsets.Resize(arrow.Int32Traits.BytesRequired(n + 1))
	o := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	for i := range n {
		s, _ := arr.ValueOffsets(i)
		o[i] = int32(s - start)
	}
	o[n] = int32(end - start)
	var validity *memory.Buffer
	if arr.NullN() > 0 {
		validity = memory.NewResizableBuffer(mem)
		defer validity.Release()
		validity.Resize(int(bitutil.BytesForBits(int64(n))))
		bitutil.CopyBitmap(arr.NullBitmapBytes(), arr.Data().Offset(), n, validity.Bytes(), 0)
	}
	data := array.NewData(want, n, []*memory.Buffer{validity, offsets}, []arrow.ArrayData{elems.Data()}, arr.NullN(), 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}
