package row

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/arrowcast"
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
//     ARRAY field takes only its own type (PROTOCOL.md says so: the rule
//     dates from when arrow-go's leaking list cast converted struct fields).
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
// timestamp finer than the column's unit) is an errs.InvalidArgument error.
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
		out, err := arrowcast.Cast(ctx, mem, rec.Column(i), f.Type)
		if err != nil {
			return nil, errs.New(errs.InvalidArgument, "column %s: cannot convert %s to %s: %w", errs.Quote(f.Name), rec.Column(i).DataType(), f.Type, err)
		}
		cols[i] = out
	}
	md := in.Metadata()
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows()), nil
}
