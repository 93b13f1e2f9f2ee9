package row

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/fluxgate-io/fluxgate/errs"
)

// EncodeKey appends the key encoding of vals to dst (docs/format/kv-encoding.md):
// the byte order of encoded keys is the order of their value tuples under
// Compare, and the encoding of vals[:k] with types[:k] is a byte prefix of the
// encoding of vals. types[i] is the type of vals[i]. A NULL value, a nested
// type or a value that does not match its type is an errs.InvalidArgument error.
func EncodeKey(dst []byte, types []arrow.DataType, vals []any) ([]byte, error) {
	if len(vals) != len(types) {
		return dst, errs.New(errs.InvalidArgument, "key of %d values for %d key columns", len(vals), len(types))
	}
	start := len(dst)
	for i, v := range vals {
		if v == nil {
			return dst[:start], errs.New(errs.InvalidArgument, "key column %d is NULL", i)
		}
		var ok bool
		if dst, ok = appendKey(dst, types[i], v); !ok {
			return dst[:start], errs.New(errs.InvalidArgument, "key column %d: cannot encode %T as a key of type %s", i, v, types[i])
		}
	}
	return dst, nil
}

// DecodeKey decodes a key written by EncodeKey with the same types. Strings
// and bytes do not alias b. Malformed input is an error wrapping ErrCorrupt.
func DecodeKey(b []byte, types []arrow.DataType) ([]any, error) {
	vals := make([]any, len(types))
	off := 0
	for i, t := range types {
		v, n, err := decodeKey(b[off:], t)
		if err != nil {
			return nil, fmt.Errorf("%w: key column %d at byte %d: %v", ErrCorrupt, i, off, err)
		}
		vals[i] = v
		off += n
	}
	if off != len(b) {
		return nil, fmt.Errorf("%w: %d trailing bytes after the key", ErrCorrupt, len(b)-off)
	}
	return vals, nil
}

// appendKey appends the key encoding of v; ok is false if v does not match t
// or t cannot be a key. Integers are big-endian with the sign bit flipped, so
// that negatives sort first.
func appendKey(dst []byte, t arrow.DataType, v any) ([]byte, bool) {
	switch t.ID() {
	case arrow.BOOL:
		x, ok := v.(bool)
		return append(dst, byte(boolInt(x))), ok
	case arrow.INT8:
		x, ok := v.(int8)
		return appendInt(dst, int64(x), 1), ok
	case arrow.INT16:
		x, ok := v.(int16)
		return appendInt(dst, int64(x), 2), ok
	case arrow.INT32:
		x, ok := v.(int32)
		return appendInt(dst, int64(x), 4), ok
	case arrow.DATE32:
		x, ok := v.(arrow.Date32)
		return appendInt(dst, int64(x), 4), ok
	case arrow.TIME32:
		x, ok := v.(arrow.Time32)
		return appendInt(dst, int64(x), 4), ok
	case arrow.INT64:
		x, ok := v.(int64)
		return appendInt(dst, x, 8), ok
	case arrow.TIME64:
		x, ok := v.(arrow.Time64)
		return appendInt(dst, int64(x), 8), ok
	case arrow.TIMESTAMP:
		x, ok := v.(arrow.Timestamp)
		return appendInt(dst, int64(x), 8), ok
	case arrow.FLOAT32:
		x, ok := v.(float32)
		bits := uint64(math.Float32bits(x))
		switch {
		case x == 0:
			bits = 0 // -0 equals 0
		case x != x:
			bits = 0x7fc00000 // one NaN, positive so that it sorts last
		}
		return appendBE(dst, floatKey(bits, 4), 4), ok
	case arrow.FLOAT64:
		x, ok := v.(float64)
		bits := math.Float64bits(x)
		switch {
		case x == 0:
			bits = 0
		case x != x:
			bits = 0x7ff8000000000000
		}
		return appendBE(dst, floatKey(bits, 8), 8), ok
	case arrow.DECIMAL128:
		// A column's decimals share one scale, so the unscaled 128-bit
		// integers order like the values.
		x, ok := v.(decimal128.Num)
		return appendBE(appendInt(dst, x.HighBits(), 8), x.LowBits(), 8), ok
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		x, ok := v.(string)
		return appendEscaped(dst, x), ok
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		x, ok := v.([]byte)
		return appendEscaped(dst, x), ok
	}
	return dst, false
}

func decodeKey(b []byte, t arrow.DataType) (v any, n int, err error) {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		s, n, err := unescape(b)
		return string(s), n, err
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		s, n, err := unescape(b)
		return append([]byte{}, s...), n, err
	case arrow.DECIMAL128:
		if len(b) < 16 {
			return nil, 0, fmt.Errorf("need 16 bytes, %d left", len(b))
		}
		return decimal128.New(int64(readBE(b, 8)^1<<63), readBE(b[8:], 8)), 16, nil
	}
	w := keyWidth(t.ID())
	if w == 0 {
		return nil, 0, fmt.Errorf("type %s cannot be a key", t)
	}
	if len(b) < w {
		return nil, 0, fmt.Errorf("need %d bytes, %d left", w, len(b))
	}
	u := readBE(b, w)
	switch t.ID() {
	case arrow.BOOL:
		if u > 1 {
			return nil, 0, fmt.Errorf("bool byte %#x", u)
		}
		v = u == 1
	case arrow.INT8:
		v = int8(u ^ 1<<7)
	case arrow.INT16:
		v = int16(u ^ 1<<15)
	case arrow.INT32:
		v = int32(u ^ 1<<31)
	case arrow.DATE32:
		v = arrow.Date32(u ^ 1<<31)
	case arrow.TIME32:
		v = arrow.Time32(u ^ 1<<31)
	case arrow.INT64:
		v = int64(u ^ 1<<63)
	case arrow.TIME64:
		v = arrow.Time64(u ^ 1<<63)
	case arrow.TIMESTAMP:
		v = arrow.Timestamp(u ^ 1<<63)
	case arrow.FLOAT32:
		v = math.Float32frombits(uint32(floatBits(u, 4)))
	case arrow.FLOAT64:
		v = math.Float64frombits(floatBits(u, 8))
	}
	return v, w, nil
}

// keyWidth is the encoded width of a fixed-width key type, 0 for the others.
func keyWidth(id arrow.Type) int {
	switch id {
	case arrow.BOOL, arrow.INT8:
		return 1
	case arrow.INT16:
		return 2
	case arrow.INT32, arrow.DATE32, arrow.TIME32, arrow.FLOAT32:
		return 4
	case arrow.INT64, arrow.TIME64, arrow.TIMESTAMP, arrow.FLOAT64:
		return 8
	}
	return 0
}

func appendInt(dst []byte, x int64, w int) []byte {
	return appendBE(dst, uint64(x)^1<<(8*w-1), w)
}

// floatKey maps the bits of a float of w bytes to an unsigned integer of the
// same order: positives gain the sign bit, negatives have every bit flipped.
func floatKey(bits uint64, w int) uint64 {
	sign := uint64(1) << (8*w - 1)
	if bits&sign != 0 {
		return ^bits & (sign<<1 - 1)
	}
	return bits | sign
}

// floatBits inverts floatKey.
func floatBits(k uint64, w int) uint64 {
	sign := uint64(1) << (8*w - 1)
	if k&sign != 0 {
		return k &^ sign
	}
	return ^k & (sign<<1 - 1)
}

func appendBE(dst []byte, u uint64, w int) []byte {
	switch w {
	case 1:
		return append(dst, byte(u))
	case 2:
		return binary.BigEndian.AppendUint16(dst, uint16(u))
	case 4:
		return binary.BigEndian.AppendUint32(dst, uint32(u))
	}
	return binary.BigEndian.AppendUint64(dst, u)
}

func readBE(b []byte, w int) uint64 {
	switch w {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(b))
	case 4:
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

// appendEscaped appends s with each 0x00 written as 0x00 0xFF, then the
// terminator 0x00 0x01. The terminator sorts below any escaped or plain byte,
// so a string sorts before its extensions ("a" < "a\x00" < "ab"), and no
// encoded string is a prefix of another, so the values after it keep their
// order.
func appendEscaped[S string | []byte](dst []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			dst = append(dst, 0, 0xff)
		} else {
			dst = append(dst, s[i])
		}
	}
	return append(dst, 0, 1)
}

// unescape decodes one escaped string at the start of b and returns it and the
// bytes it took. The result may alias b.
func unescape(b []byte) (s []byte, n int, err error) {
	var out []byte // nil until the first escape; until then s is b[:i]
	run := 0       // start of the bytes not yet copied to out
	for i := 0; i+1 < len(b); i++ {
		if b[i] != 0 {
			continue
		}
		switch b[i+1] {
		case 1:
			if out == nil {
				return b[:i], i + 2, nil
			}
			return append(out, b[run:i]...), i + 2, nil
		case 0xff:
			out = append(out, b[run:i+1]...)
			i++
			run = i + 1
		default:
			return nil, 0, fmt.Errorf("byte %#x after 0x00 in a string", b[i+1])
		}
	}
	return nil, 0, fmt.Errorf("unterminated string")
}
