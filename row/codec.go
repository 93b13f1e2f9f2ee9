package row

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// ErrCorrupt is wrapped by the errors of Decode and DecodeKey.
var ErrCorrupt = errors.New("row: corrupt encoding")

// Encode appends the stored form of r (docs/format/kv-encoding.md) to dst and
// returns the extended slice. types[i] is the type of r[i].
func Encode(dst []byte, schemaID int32, types []arrow.DataType, r Row) []byte {
	if len(r) != len(types) {
		panic(fmt.Sprintf("row: encoding %d values with %d types", len(r), len(types)))
	}
	dst = slices.Grow(dst, encodedSizeHint(r))
	dst = binary.AppendVarint(dst, int64(schemaID))
	dst = binary.AppendUvarint(dst, uint64(len(r)))
	dst, bm := appendBitmap(dst, len(r))
	for i, v := range r {
		if v == nil {
			setNull(dst[bm:], i)
			continue
		}
		dst = encodeValue(dst, types[i], v)
	}
	return dst
}

// encodedSizeHint is about the size Encode makes of r, so that it allocates
// once: a header, 8 bytes a scalar (most are at most that), and strings and
// binary values with their length.
func encodedSizeHint(r Row) int {
	n := 8 + len(r)/8
	for _, v := range r {
		switch v := v.(type) {
		case []byte:
			n += len(v) + binary.MaxVarintLen32
		case string:
			n += len(v) + binary.MaxVarintLen32
		default:
			n += 8
		}
	}
	return n
}

// Decode decodes a row written by Encode. types may extend the types the row
// was written with: columns are only ever added, nullable, at the end, so the
// missing trailing values are NULL. A row with more columns than types, a
// truncated or corrupt row, or trailing bytes are errors wrapping ErrCorrupt.
// The values do not alias b.
func Decode(b []byte, types []arrow.DataType) (schemaID int32, r Row, err error) {
	d := decoder{b: b}
	sid, n, bm := d.header(len(types))
	r = make(Row, len(types))
	for i := range n {
		if !isNull(bm, i) {
			r[i] = d.value(types[i])
		}
	}
	if d.err == nil && d.off != len(b) {
		d.fail("%d trailing bytes", len(b)-d.off)
	}
	if d.err != nil {
		return 0, nil, d.err
	}
	return sid, r, nil
}

// header reads a row's schema id, column count (at most ncols) and null
// bitmap.
func (d *decoder) header(ncols int) (schemaID int32, n int, nulls []byte) {
	if len(d.b) >= 2 && d.b[0] < 0x80 && d.b[1] < 0x80 && int(d.b[1]) <= ncols {
		// Both fit one byte (schema ids and widths are small), as a row
		// mostly is: read them without the varint loops.
		u, cols := d.b[0], int(d.b[1])
		d.off = 2
		return int32(u>>1) ^ -int32(u&1), cols, d.bitmap(cols)
	}
	sid := d.varint()
	if sid < math.MinInt32 || sid > math.MaxInt32 {
		d.fail("schema id %d out of range", sid)
	}
	cols := d.uvarint()
	if cols > uint64(ncols) {
		d.fail("row of %d columns, more than the %d types given", cols, ncols)
		cols = 0
	}
	return int32(sid), int(cols), d.bitmap(int(cols))
}

var le = binary.LittleEndian

// encodeValue appends the non-null value v of type t.
func encodeValue(dst []byte, t arrow.DataType, v any) []byte {
	switch t.ID() {
	case arrow.BOOL:
		return append(dst, byte(boolInt(v.(bool))))
	case arrow.INT8:
		return append(dst, byte(v.(int8)))
	case arrow.INT16:
		return le.AppendUint16(dst, uint16(v.(int16)))
	case arrow.INT32:
		return le.AppendUint32(dst, uint32(v.(int32)))
	case arrow.DATE32:
		return le.AppendUint32(dst, uint32(v.(arrow.Date32)))
	case arrow.TIME32:
		return le.AppendUint32(dst, uint32(v.(arrow.Time32)))
	case arrow.INT64:
		return le.AppendUint64(dst, uint64(v.(int64)))
	case arrow.TIME64:
		return le.AppendUint64(dst, uint64(v.(arrow.Time64)))
	case arrow.TIMESTAMP:
		return le.AppendUint64(dst, uint64(v.(arrow.Timestamp)))
	case arrow.FLOAT32:
		return le.AppendUint32(dst, math.Float32bits(v.(float32)))
	case arrow.FLOAT64:
		return le.AppendUint64(dst, math.Float64bits(v.(float64)))
	case arrow.DECIMAL128:
		n := v.(decimal128.Num)
		return le.AppendUint64(le.AppendUint64(dst, n.LowBits()), uint64(n.HighBits()))
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		s := v.(string)
		return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		s := v.([]byte)
		return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
	case arrow.FIXED_SIZE_BINARY:
		s := v.([]byte)
		if w := t.(*arrow.FixedSizeBinaryType).ByteWidth; len(s) != w {
			panic(fmt.Sprintf("row: %d bytes for %s", len(s), t))
		}
		return append(dst, s...)
	case arrow.LIST, arrow.LARGE_LIST:
		elem := t.(arrow.ListLikeType).Elem()
		l := v.([]any)
		dst, bm := appendBitmap(binary.AppendUvarint(dst, uint64(len(l))), len(l))
		for i, e := range l {
			if e == nil {
				setNull(dst[bm:], i)
				continue
			}
			dst = encodeValue(dst, elem, e)
		}
		return dst
	case arrow.MAP:
		mt := t.(*arrow.MapType)
		kt, it := mt.KeyType(), mt.ItemType()
		m := v.(MapValue)
		dst, bm := appendBitmap(binary.AppendUvarint(dst, uint64(len(m))), len(m))
		for i, e := range m {
			dst = encodeValue(dst, kt, e.Key)
			if e.Value == nil {
				setNull(dst[bm:], i)
				continue
			}
			dst = encodeValue(dst, it, e.Value)
		}
		return dst
	case arrow.STRUCT:
		st := t.(*arrow.StructType)
		s := v.([]any)
		if len(s) != st.NumFields() {
			panic(fmt.Sprintf("row: %d values for %s", len(s), t))
		}
		dst, bm := appendBitmap(dst, len(s))
		for i, f := range s {
			if f == nil {
				setNull(dst[bm:], i)
				continue
			}
			dst = encodeValue(dst, st.Field(i).Type, f)
		}
		return dst
	}
	panic(fmt.Sprintf("row: cannot encode values of type %s", t))
}

// appendBitmap appends a cleared null bitmap for n values and returns where it
// starts.
func appendBitmap(dst []byte, n int) ([]byte, int) {
	at := len(dst)
	return append(dst, make([]byte, (n+7)/8)...), at
}

func setNull(bm []byte, i int)     { bm[i/8] |= 1 << (i % 8) }
func isNull(bm []byte, i int) bool { return bm[i/8]&(1<<(i%8)) != 0 }

// decoder reads an encoded row. Its error is sticky: after the first failure
// every read returns zeros and empties, so decoding winds down without checks
// at every step and without allocating from garbage counts.
type decoder struct {
	b   []byte
	off int
	err error

	// Strings and byte slices are cut from one copy of the rest of the row,
	// made at the first of them, rather than allocated one by one.
	strs   string
	strsAt int
	bufs   []byte
	bufsAt int
}

var zeros [16]byte

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: at byte %d: %s", ErrCorrupt, d.off, fmt.Sprintf(format, args...))
	}
}

// take consumes n ≤ 16 bytes; past the end it fails and returns zeros.
func (d *decoder) take(n int) []byte {
	if d.err != nil || n > len(d.b)-d.off {
		d.fail("need %d bytes, %d left", n, len(d.b)-d.off)
		return zeros[:n]
	}
	d.off += n
	return d.b[d.off-n : d.off]
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.off += n
	return v
}

// length reads a byte length, which must fit in what is left.
func (d *decoder) length() int {
	n := d.uvarint()
	if n > uint64(len(d.b)-d.off) {
		d.fail("length %d, %d bytes left", n, len(d.b)-d.off)
		return 0
	}
	return int(n)
}

// count reads an element count. Each element takes at least its bit in the
// null bitmap, which bounds what a corrupt count can make us allocate.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)-d.off)*8 {
		d.fail("count %d, %d bytes left", n, len(d.b)-d.off)
		return 0
	}
	return int(n)
}

// bitmap reads the null bitmap of n values; its padding bits must be clear.
func (d *decoder) bitmap(n int) []byte {
	nb := (n + 7) / 8
	if d.err != nil || nb > len(d.b)-d.off {
		d.fail("null bitmap of %d bytes, %d left", nb, len(d.b)-d.off)
		return make([]byte, nb)
	}
	bm := d.b[d.off : d.off+nb]
	d.off += nb
	if n%8 != 0 && bm[nb-1]>>(n%8) != 0 {
		d.fail("null bitmap padding is not zero")
	}
	return bm
}

func (d *decoder) text() string {
	n := d.length()
	if n == 0 {
		return ""
	}
	if d.strs == "" {
		d.strs, d.strsAt = string(d.b[d.off:]), d.off
	}
	i := d.off - d.strsAt
	d.off += n
	return d.strs[i : i+n]
}

func (d *decoder) blob(n int) []byte {
	if d.err != nil || n > len(d.b)-d.off {
		d.fail("need %d bytes, %d left", n, len(d.b)-d.off)
		return nil
	}
	if n == 0 {
		return []byte{}
	}
	if d.bufs == nil {
		d.bufs, d.bufsAt = append([]byte{}, d.b[d.off:]...), d.off
	}
	i := d.off - d.bufsAt
	d.off += n
	return d.bufs[i : i+n : i+n] // capped, so appending to one value cannot overwrite the next
}

func (d *decoder) value(t arrow.DataType) any {
	switch t.ID() {
	case arrow.BOOL:
		b := d.take(1)[0]
		if b > 1 {
			d.fail("bool byte %#x", b)
		}
		return b == 1
	case arrow.INT8:
		return int8(d.take(1)[0])
	case arrow.INT16:
		return int16(le.Uint16(d.take(2)))
	case arrow.INT32:
		return int32(le.Uint32(d.take(4)))
	case arrow.DATE32:
		return arrow.Date32(le.Uint32(d.take(4)))
	case arrow.TIME32:
		return arrow.Time32(le.Uint32(d.take(4)))
	case arrow.INT64:
		return int64(le.Uint64(d.take(8)))
	case arrow.TIME64:
		return arrow.Time64(le.Uint64(d.take(8)))
	case arrow.TIMESTAMP:
		return arrow.Timestamp(le.Uint64(d.take(8)))
	case arrow.FLOAT32:
		return math.Float32frombits(le.Uint32(d.take(4)))
	case arrow.FLOAT64:
		return math.Float64frombits(le.Uint64(d.take(8)))
	case arrow.DECIMAL128:
		p := d.take(16)
		return decimal128.New(int64(le.Uint64(p[8:])), le.Uint64(p))
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return d.text()
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return d.blob(d.length())
	case arrow.FIXED_SIZE_BINARY:
		return d.blob(t.(*arrow.FixedSizeBinaryType).ByteWidth)
	case arrow.LIST, arrow.LARGE_LIST:
		elem := t.(arrow.ListLikeType).Elem()
		l := make([]any, d.count())
		bm := d.bitmap(len(l))
		for i := range l {
			if !isNull(bm, i) {
				l[i] = d.value(elem)
			}
		}
		return l
	case arrow.MAP:
		mt := t.(*arrow.MapType)
		kt, it := mt.KeyType(), mt.ItemType()
		m := make(MapValue, d.count())
		bm := d.bitmap(len(m))
		for i := range m {
			m[i].Key = d.value(kt)
			if !isNull(bm, i) {
				m[i].Value = d.value(it)
			}
		}
		return m
	case arrow.STRUCT:
		st := t.(*arrow.StructType)
		s := make([]any, st.NumFields())
		bm := d.bitmap(len(s))
		for i := range s {
			if !isNull(bm, i) {
				s[i] = d.value(st.Field(i).Type)
			}
		}
		return s
	}
	d.fail("cannot decode values of type %s", t)
	return nil
}
