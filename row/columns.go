package row

import (
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ColumnDecoder decodes encoded rows into Arrow columns, many rows at a time
// (a snapshot read). Fixed-width values are stored in the row exactly as
// Arrow lays them out, and strings and binary values as a length and bytes,
// so those columns are filled as plain byte buffers, without a builder's
// per-value bookkeeping; other types go through Arrow builders (DecodeTo's
// path). Columns the row lacks are NULL, as in DecodeTo.
type ColumnDecoder struct {
	types []arrow.DataType
	cols  []*decodedColumn // nil: skipped
	rows  int
	mem   memory.Allocator
	// validBytes is the length of the columns' validity bitmaps.
	validBytes int
}

// decodedColumn is one column being filled.
type decodedColumn struct {
	typ   arrow.DataType
	width int           // bytes of a fixed-width value; 0 for strings and binary
	b     array.Builder // for the other types; then nothing else is used
	valid []byte        // validity bitmap
	nulls int
	data  []byte  // fixed-width values, or string bytes
	offs  []int32 // string offsets, the first 0
}

// NewColumnDecoder returns a decoder of rows of types into the columns
// wanted (want[i] false skips column i).
func NewColumnDecoder(types []arrow.DataType, want []bool, mem memory.Allocator) *ColumnDecoder {
	d := &ColumnDecoder{types: types, cols: make([]*decodedColumn, len(types)), mem: mem}
	for i, t := range types {
		if !want[i] {
			continue
		}
		c := &decodedColumn{typ: t}
		switch t.ID() {
		case arrow.STRING, arrow.BINARY:
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DATE32,
			arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DECIMAL128, arrow.FIXED_SIZE_BINARY:
			c.width = t.(arrow.FixedWidthDataType).BitWidth() / 8
		default:
			c.b = array.NewBuilder(mem, t)
		}
		d.cols[i] = c
	}
	d.reset(0)
	return d
}

// Rows reports the rows decoded since the last Columns.
func (d *ColumnDecoder) Rows() int { return d.rows }

// Decode appends one encoded row. On error the columns may hold part of it;
// the caller gives up the batch.
func (d *ColumnDecoder) Decode(b []byte) error {
	dec := decoder{b: b}
	_, n, bm := dec.header(len(d.types))
	row := d.rows
	if row/8 >= d.validBytes {
		d.growValid()
	}
	for i, c := range d.cols {
		null := i >= n || isNull(bm, i)
		switch {
		case c == nil:
			if !null {
				dec.skip(d.types[i])
			}
		case c.b != nil:
			if null {
				c.b.AppendNull()
			} else {
				dec.appendTo(c.b, c.typ)
			}
		case null:
			c.nulls++
			if c.width > 0 {
				// Zeros: the buffers are fresh, and never written past their length.
				c.data = slices.Grow(c.data, c.width)[:len(c.data)+c.width]
			} else {
				c.offs = append(c.offs, int32(len(c.data)))
			}
		default:
			bitutil.SetBit(c.valid, row)
			if c.width > 0 {
				c.data = append(c.data, dec.take(c.width)...)
			} else {
				c.data = append(c.data, dec.span(dec.length())...)
				c.offs = append(c.offs, int32(len(c.data)))
			}
		}
	}
	if dec.err == nil && dec.off != len(b) {
		dec.fail("%d trailing bytes", len(b)-dec.off)
	}
	if dec.err != nil {
		return dec.err
	}
	d.rows++
	return nil
}

// Columns returns the decoded columns (nil for those skipped) and starts
// over, sizing the next columns like these.
func (d *ColumnDecoder) Columns() []arrow.Array {
	out := make([]arrow.Array, len(d.cols))
	for i, c := range d.cols {
		switch {
		case c == nil:
		case c.b != nil:
			out[i] = c.b.NewArray()
		default:
			var valid *memory.Buffer
			if c.nulls > 0 {
				valid = memory.NewBufferBytes(c.valid[:bitutil.BytesForBits(int64(d.rows))])
			}
			bufs := []*memory.Buffer{valid, memory.NewBufferBytes(c.data)}
			if c.width == 0 {
				offs := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c.offs))), len(c.offs)*4)
				bufs = []*memory.Buffer{valid, memory.NewBufferBytes(offs), memory.NewBufferBytes(c.data)}
			}
			data := array.NewData(c.typ, d.rows, bufs, nil, c.nulls, 0)
			out[i] = array.MakeFromData(data)
			data.Release()
		}
	}
	d.reset(d.rows)
	return out
}

// growValid doubles the columns' validity bitmaps.
func (d *ColumnDecoder) growValid() {
	d.validBytes *= 2
	for _, c := range d.cols {
		if c != nil && c.b == nil {
			c.valid = append(c.valid, make([]byte, d.validBytes-len(c.valid))...)
		}
	}
}

// reset starts new columns with room for about rows rows.
func (d *ColumnDecoder) reset(rows int) {
	rows = max(rows, 1024)
	d.validBytes = int(bitutil.BytesForBits(int64(rows)))
	for _, c := range d.cols {
		if c == nil || c.b != nil {
			continue
		}
		// Fresh buffers: the arrays made of the last ones own those.
		dataLen := len(c.data)
		*c = decodedColumn{typ: c.typ, width: c.width}
		c.valid = make([]byte, d.validBytes)
		if c.width > 0 {
			c.data = make([]byte, 0, rows*c.width)
		} else {
			c.data = make([]byte, 0, dataLen)
			c.offs = make([]int32, 1, rows+1)
		}
	}
	d.rows = 0
}

// Release releases the builders of the columns that have them.
func (d *ColumnDecoder) Release() {
	for _, c := range d.cols {
		if c != nil && c.b != nil {
			c.b.Release()
		}
	}
}
