package bucketing

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// An encoder appends the Iceberg single-value serialization used for hashing
// (spec Appendix B) of row i of one column to buf.
type encoder func(buf []byte, i int) []byte

// A binder makes the encoder of a batch's column. Choosing it once per key
// column from the schema keeps the type dispatch out of the row loop.
type binder func(arrow.Array) encoder

// binderFor returns the binder for columns of type dt, or nil if Iceberg
// cannot hash dt.
func binderFor(dt arrow.DataType) binder {
	switch dt.ID() {
	case arrow.INT8:
		return func(a arrow.Array) encoder { return longs(a.(*array.Int8).Int8Values()) }
	case arrow.INT16:
		return func(a arrow.Array) encoder { return longs(a.(*array.Int16).Int16Values()) }
	case arrow.INT32:
		return func(a arrow.Array) encoder { return longs(a.(*array.Int32).Int32Values()) }
	case arrow.INT64:
		return func(a arrow.Array) encoder { return longs(a.(*array.Int64).Int64Values()) }
	case arrow.DATE32:
		return func(a arrow.Array) encoder { return longs(a.(*array.Date32).Date32Values()) }
	case arrow.TIME32:
		unit := dt.(*arrow.Time32Type).Unit
		return func(a arrow.Array) encoder { return micros(a.(*array.Time32).Time32Values(), unit) }
	case arrow.TIME64:
		unit := dt.(*arrow.Time64Type).Unit
		return func(a arrow.Array) encoder { return micros(a.(*array.Time64).Time64Values(), unit) }
	case arrow.TIMESTAMP: // the zone does not matter: values are UTC instants
		unit := dt.(*arrow.TimestampType).Unit
		return func(a arrow.Array) encoder { return micros(a.(*array.Timestamp).TimestampValues(), unit) }
	case arrow.BOOL:
		return func(a arrow.Array) encoder {
			v := a.(*array.Boolean)
			return func(buf []byte, i int) []byte {
				var l uint64
				if v.Value(i) {
					l = 1
				}
				return binary.LittleEndian.AppendUint64(buf, l)
			}
		}
	case arrow.FLOAT32:
		return func(a arrow.Array) encoder { return doubles(a.(*array.Float32).Float32Values()) }
	case arrow.FLOAT64:
		return func(a arrow.Array) encoder { return doubles(a.(*array.Float64).Float64Values()) }
	case arrow.DECIMAL128:
		return func(a arrow.Array) encoder {
			v := a.(*array.Decimal128)
			return func(buf []byte, i int) []byte {
				d := v.Value(i)
				return appendMinBigEndian(buf, d.HighBits(), d.LowBits())
			}
		}
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return func(a arrow.Array) encoder {
			v := a.(interface{ Value(int) string })
			return func(buf []byte, i int) []byte { return append(buf, v.Value(i)...) }
		}
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return func(a arrow.Array) encoder {
			v := a.(interface{ Value(int) []byte })
			return func(buf []byte, i int) []byte { return append(buf, v.Value(i)...) }
		}
	}
	return nil
}

// longs serializes integers as Iceberg longs, 8 bytes little-endian: Iceberg
// hashes every int width as a long so that type promotion keeps buckets.
func longs[T ~int8 | ~int16 | ~int32 | ~int64](vals []T) encoder {
	return func(buf []byte, i int) []byte {
		return binary.LittleEndian.AppendUint64(buf, uint64(vals[i]))
	}
}

// micros serializes times and timestamps in unit as longs of microseconds,
// flooring nanoseconds as Iceberg does.
func micros[T ~int32 | ~int64](vals []T, unit arrow.TimeUnit) encoder {
	scale := func(mul int64) encoder {
		return func(buf []byte, i int) []byte {
			return binary.LittleEndian.AppendUint64(buf, uint64(int64(vals[i])*mul))
		}
	}
	switch unit {
	case arrow.Second:
		return scale(1_000_000)
	case arrow.Millisecond:
		return scale(1_000)
	case arrow.Microsecond:
		return longs(vals)
	}
	return func(buf []byte, i int) []byte {
		ns := int64(vals[i])
		us := ns / 1_000
		if ns%1_000 < 0 {
			us--
		}
		return binary.LittleEndian.AppendUint64(buf, uint64(us))
	}
}

// doubles serializes floats as the bits of their float64 value, with -0.0 and
// NaNs canonicalized as the spec requires.
func doubles[T float32 | float64](vals []T) encoder {
	return func(buf []byte, i int) []byte {
		f := float64(vals[i])
		bits := math.Float64bits(f)
		switch {
		case f == 0:
			bits = 0
		case f != f:
			bits = 0x7ff8000000000000
		}
		return binary.LittleEndian.AppendUint64(buf, bits)
	}
}

// appendMinBigEndian appends the 128-bit two's-complement integer hi:lo in
// the fewest big-endian bytes that keep its sign, like Java's
// BigInteger.toByteArray.
func appendMinBigEndian(buf []byte, hi int64, lo uint64) []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(hi))
	binary.BigEndian.PutUint64(b[8:], lo)
	s := b[:]
	// A leading byte is redundant when it only repeats the next byte's sign.
	for len(s) > 1 && (s[0] == 0 && s[1] < 0x80 || s[0] == 0xff && s[1] >= 0x80) {
		s = s[1:]
	}
	return append(buf, s...)
}
