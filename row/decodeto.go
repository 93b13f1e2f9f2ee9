package row

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// DecodeTo decodes an encoded row straight into builders: to[i] receives
// column i (nil skips it). Scalar values are appended without being boxed
// into a Row, which makes reading many stored rows (a snapshot scan) several
// times cheaper than Decode followed by Append. Columns the row lacks (it was
// written under an older, narrower schema) are appended as NULL. On error
// the builders may hold part of the row.
func DecodeTo(b []byte, types []arrow.DataType, to []array.Builder) error {
	d := decoder{b: b}
	_, n, bm := d.header(len(types))
	for i := range types {
		switch {
		case i >= n || isNull(bm, i):
			if to[i] != nil {
				to[i].AppendNull()
			}
		case to[i] == nil:
			d.skip(types[i])
		default:
			d.appendTo(to[i], types[i])
		}
	}
	if d.err == nil && d.off != len(b) {
		d.fail("%d trailing bytes", len(b)-d.off)
	}
	return d.err
}

// appendTo decodes one non-null value into b.
func (d *decoder) appendTo(b array.Builder, t arrow.DataType) {
	switch bb := b.(type) {
	case *array.Int64Builder:
		bb.Append(int64(le.Uint64(d.take(8))))
	case *array.Int32Builder:
		bb.Append(int32(le.Uint32(d.take(4))))
	case *array.Float64Builder:
		bb.Append(math.Float64frombits(le.Uint64(d.take(8))))
	case *array.Float32Builder:
		bb.Append(math.Float32frombits(le.Uint32(d.take(4))))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(le.Uint64(d.take(8))))
	case *array.Date32Builder:
		bb.Append(arrow.Date32(le.Uint32(d.take(4))))
	case *array.Decimal128Builder:
		p := d.take(16)
		bb.Append(decimal128.New(int64(le.Uint64(p[8:])), le.Uint64(p)))
	case *array.StringBuilder:
		bb.BinaryBuilder.Append(d.span(d.length()))
	case *array.BinaryBuilder:
		if t.ID() == arrow.BINARY {
			bb.Append(d.span(d.length()))
			return
		}
		Append(b, d.value(t))
	default:
		Append(b, d.value(t))
	}
}

// skip passes over one non-null value.
func (d *decoder) skip(t arrow.DataType) {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		d.span(d.length())
	default:
		d.value(t)
	}
}

// span consumes n bytes that length has checked are there.
func (d *decoder) span(n int) []byte {
	d.off += n
	return d.b[d.off-n : d.off]
}
