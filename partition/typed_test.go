package partition

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/row"
	"github.com/fluxgate-io/fluxgate/row/rowtest"
)

// keyTypes are the Arrow types of the partition key types (sqltype's), with
// every TIME and TIMESTAMP unit.
var keyTypes = []arrow.DataType{
	arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.FixedWidthTypes.Boolean,
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Date32,
	arrow.FixedWidthTypes.Time32ms, arrow.FixedWidthTypes.Time64us, arrow.FixedWidthTypes.Time64ns,
	&arrow.TimestampType{Unit: arrow.Millisecond}, &arrow.TimestampType{Unit: arrow.Microsecond},
	&arrow.TimestampType{Unit: arrow.Nanosecond}, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"},
}

// valueString is the partition value of v, a value of dt, through
// ValueString.
func valueString(t *testing.T, dt arrow.DataType, v any) string {
	t.Helper()
	b := array.NewBuilder(memtest.Allocator(t), dt)
	defer b.Release()
	switch b := b.(type) {
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Int8Builder:
		b.Append(v.(int8))
	case *array.Int16Builder:
		b.Append(v.(int16))
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Float32Builder:
		b.Append(v.(float32))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.Date32Builder:
		b.Append(v.(arrow.Date32))
	case *array.Time32Builder:
		b.Append(v.(arrow.Time32))
	case *array.Time64Builder:
		b.Append(v.(arrow.Time64))
	case *array.TimestampBuilder:
		b.Append(v.(arrow.Timestamp))
	default:
		t.Fatalf("no builder for %s", dt)
	}
	arr := b.NewArray()
	defer arr.Release()
	s, err := ValueString("k", arr, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// same reports whether two values of dt are the same value: equal under
// row.Compare (which holds every NaN equal, as the partition value "NaN"
// does), and a zero of the same sign.
func same(dt arrow.DataType, a, b any) bool {
	if row.Compare(dt, a, b) != 0 {
		return false
	}
	switch a := a.(type) {
	case float32:
		return a != 0 || math.Signbit(float64(a)) == math.Signbit(float64(b.(float32)))
	case float64:
		return a != 0 || math.Signbit(a) == math.Signbit(b.(float64))
	}
	return true
}

// checkRoundTrip checks that v's partition value maps back to bounds that
// hold v: v itself for every type but a TIME finer than milliseconds, whose
// bounds are the least and greatest values of v's millisecond.
func checkRoundTrip(t *testing.T, dt arrow.DataType, v any) {
	t.Helper()
	s := valueString(t, dt, v)
	lo, hi, ok := Bounds(dt, s)
	if !ok {
		t.Errorf("%s %v: partition value %q maps back to nothing", dt, v, s)
		return
	}
	if _, ranged := dt.(*arrow.Time64Type); !ranged {
		if !same(dt, lo, v) || !same(dt, hi, v) {
			t.Errorf("%s %v: partition value %q maps back to [%v, %v]", dt, v, s, lo, hi)
		}
		return
	}
	if row.Compare(dt, lo, v) > 0 || row.Compare(dt, hi, v) < 0 {
		t.Errorf("%s %v: partition value %q maps back to [%v, %v], without it", dt, v, s, lo, hi)
	}
	// The bounds are tight: they have the partition value, the values
	// beyond them another.
	l, h := int64(lo.(arrow.Time64)), int64(hi.(arrow.Time64))
	if valueString(t, dt, lo) != s || valueString(t, dt, hi) != s {
		t.Errorf("%s %v: bounds [%d, %d] of %q have partition values %q and %q", dt, v, l, h, s, valueString(t, dt, lo), valueString(t, dt, hi))
	}
	if l > math.MinInt64 && valueString(t, dt, arrow.Time64(l-1)) == s {
		t.Errorf("%s: %d, below the bounds [%d, %d], has the partition value %q", dt, l-1, l, h, s)
	}
	if h < math.MaxInt64 && valueString(t, dt, arrow.Time64(h+1)) == s {
		t.Errorf("%s: %d, above the bounds [%d, %d], has the partition value %q", dt, h+1, l, h, s)
	}
}

func TestBoundsRoundTripEdges(t *testing.T) {
	ms, us, ns := &arrow.TimestampType{Unit: arrow.Millisecond}, &arrow.TimestampType{Unit: arrow.Microsecond}, &arrow.TimestampType{Unit: arrow.Nanosecond}
	ltz := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	edges := []struct {
		dt   arrow.DataType
		vals []any
	}{
		{arrow.BinaryTypes.String, []any{"eu-west", "20261201", "NaN", "-0_0"}},
		{arrow.BinaryTypes.Binary, []any{[]byte{}, []byte{0}, []byte{0x0a, 0xff}, []byte{0xff, 0xff, 0xff}}},
		{arrow.FixedWidthTypes.Boolean, []any{true, false}},
		{arrow.PrimitiveTypes.Int8, []any{int8(math.MinInt8), int8(-1), int8(0), int8(math.MaxInt8)}},
		{arrow.PrimitiveTypes.Int16, []any{int16(math.MinInt16), int16(math.MaxInt16)}},
		{arrow.PrimitiveTypes.Int32, []any{int32(math.MinInt32), int32(math.MaxInt32)}},
		{arrow.PrimitiveTypes.Int64, []any{int64(math.MinInt64), int64(0), int64(math.MaxInt64)}},
		{arrow.PrimitiveTypes.Float32, []any{float32(0), float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
			float32(math.SmallestNonzeroFloat32), float32(-math.MaxFloat32), float32(1e-3), float32(9.999999e6), float32(1e7), float32(0.1), float32(16777217)}},
		{arrow.PrimitiveTypes.Float64, []any{0.0, math.Copysign(0, -1), math.NaN(), math.Float64frombits(0xfff8000000000001), math.Inf(1), math.Inf(-1),
			math.SmallestNonzeroFloat64, math.MaxFloat64, 1e-3, 0.000999, 9999999.999999998, 1e7, 0.1, 1.0 / 3, -2.5e-4}},
		{arrow.FixedWidthTypes.Date32, []any{arrow.Date32(0), arrow.Date32(-1), arrow.Date32(-719_529), arrow.Date32(2_932_897), arrow.Date32(math.MinInt32), arrow.Date32(math.MaxInt32)}},
		{arrow.FixedWidthTypes.Time32ms, []any{arrow.Time32(0), arrow.Time32(3_723_004), arrow.Time32(86_399_999), arrow.Time32(math.MaxInt32)}},
		{arrow.FixedWidthTypes.Time32s, []any{arrow.Time32(0), arrow.Time32(3723), arrow.Time32(math.MaxInt32)}},
		{arrow.FixedWidthTypes.Time64us, []any{arrow.Time64(0), arrow.Time64(-999), arrow.Time64(999), arrow.Time64(1000), arrow.Time64(86_399_999_999), arrow.Time64(math.MaxInt64)}},
		{arrow.FixedWidthTypes.Time64ns, []any{arrow.Time64(0), arrow.Time64(-999_999), arrow.Time64(1), arrow.Time64(3_723_004_000_001), arrow.Time64(math.MaxInt64)}},
		{ms, []any{arrow.Timestamp(0), arrow.Timestamp(-1), arrow.Timestamp(-62_135_596_800_001), arrow.Timestamp(253_402_300_800_000), arrow.Timestamp(math.MinInt64), arrow.Timestamp(math.MaxInt64)}},
		{us, []any{arrow.Timestamp(-1), arrow.Timestamp(1_764_547_200_000_000), arrow.Timestamp(math.MinInt64), arrow.Timestamp(math.MaxInt64)}},
		{ns, []any{arrow.Timestamp(-1), arrow.Timestamp(1_764_547_200_000_001_500), arrow.Timestamp(math.MinInt64), arrow.Timestamp(math.MaxInt64)}},
		{ltz, []any{arrow.Timestamp(-1_000_001), arrow.Timestamp(1_764_547_200_123_456)}},
	}
	for _, e := range edges {
		for _, v := range e.vals {
			checkRoundTrip(t, e.dt, v)
		}
	}
}

// TestBoundsRoundTripRandom maps random values of every key type, a third of
// them edge values, through ValueString and back.
func TestBoundsRoundTripRandom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(20, 2026))
	for _, dt := range keyTypes {
		for range 2000 {
			v := randValue(rnd, dt)
			if tv, ok := v.(arrow.Time32); ok && tv < 0 {
				continue // a time before midnight: checked by TestBoundsRefuses
			}
			if tv, ok := v.(arrow.Time64); ok && int64(tv) < -int64(time64PerMs(dt))+1 {
				continue
			}
			checkRoundTrip(t, dt, v)
		}
	}
}

func time64PerMs(dt arrow.DataType) int64 {
	return int64(1e6 / dt.(*arrow.Time64Type).Unit.Multiplier())
}

func randValue(rnd *rand.Rand, dt arrow.DataType) any {
	u := rnd.Uint64()
	if rnd.IntN(3) == 0 {
		u = []uint64{0, 1, math.MaxUint64, 1 << 63, 1<<63 - 1, 1 << 31, 1<<31 - 1, 999, 1000, 999_999, 86_399_999}[rnd.IntN(11)]
	}
	if v, ok := rowtest.FromBits(dt, u); ok {
		return v
	}
	switch dt.ID() {
	case arrow.STRING:
		return string(rune('a'+u%26)) + "-" + string(rune('0'+u%10))
	case arrow.BINARY:
		b := make([]byte, rnd.IntN(6))
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		return b
	case arrow.FLOAT32:
		return math.Float32frombits(uint32(u)) // every bit pattern: NaNs, subnormals, zeros
	case arrow.FLOAT64:
		if rnd.IntN(2) == 0 {
			return rnd.NormFloat64() * math.Pow(10, float64(rnd.IntN(40)-20))
		}
		return math.Float64frombits(u)
	}
	panic(dt)
}

// TestBoundsRefuses checks the partition values no value of the type has:
// other spellings of a value (partitions created by name, which no row is
// routed to) and the values of times before midnight, whose fields carry a
// minus sign.
func TestBoundsRefuses(t *testing.T) {
	refused := []struct {
		dt   arrow.DataType
		vals []string
	}{
		{arrow.BinaryTypes.Binary, []string{"0AFF", "0af", "zz"}},
		{arrow.FixedWidthTypes.Boolean, []string{"TRUE", "1", "t"}},
		{arrow.PrimitiveTypes.Int8, []string{"007", "+7", "128", "-0", "1_0"}},
		{arrow.PrimitiveTypes.Int64, []string{"9223372036854775808", " 1"}},
		{arrow.PrimitiveTypes.Float32, []string{"1_50", "1", "1.5", "1e7", "1_0e7", "0_1000000001", "Infinity", "nan", "+Inf", "3_4028236E38"}},
		{arrow.PrimitiveTypes.Float64, []string{"1_0E07", "10000000_0", "0_0001", "-0", "0x1p-2", "1_0E400"}},
		{arrow.FixedWidthTypes.Date32, []string{"2026-1-01", "2026-02-30", "+2026-01-01", "20261201", "5881611-01-01"}},
		{arrow.FixedWidthTypes.Time32ms, []string{"1-00-00_000", "00-60-00_000", "00-00-00_0000", "00-00-00", "-1-00-00_000", "00-00-00_-01", "596-31-23_648"}},
		{arrow.FixedWidthTypes.Time32s, []string{"00-00-00_001", "00-00-01_500"}},
		{arrow.FixedWidthTypes.Time64us, []string{"00-00--1_000", "00-00-00_-01"}},
		{&arrow.TimestampType{Unit: arrow.Millisecond}, []string{"2026-12-01-00-00-00_0001", "2026-12-01-00-00-00_10", "2026-12-01-00-00-00", "2026-12-01T00-00-00_", "2026-12-01-24-00-00_"}},
		{&arrow.TimestampType{Unit: arrow.Nanosecond}, []string{"2262-04-12-00-00-00_", "1677-09-21-00-00-00_", "2026-12-01-00-00-00_0000000001"}},
		{&arrow.TimestampType{Unit: arrow.Second}, []string{"2026-12-01-00-00-00_"}},
		{&arrow.Decimal128Type{Precision: 10, Scale: 2}, []string{"1_00"}},
	}
	for _, r := range refused {
		for _, s := range r.vals {
			if lo, hi, ok := Bounds(r.dt, s); ok {
				t.Errorf("%s %q: bounds [%v, %v], want none", r.dt, s, lo, hi)
			}
		}
	}
	for _, v := range []arrow.Time32{-1, -1000, -60_000, -3_600_000, -3_723_004, math.MinInt32} {
		s := valueString(t, arrow.FixedWidthTypes.Time32ms, v)
		if lo, hi, ok := Bounds(arrow.FixedWidthTypes.Time32ms, s); ok {
			t.Errorf("time %d before midnight, partition value %q: bounds [%v, %v], want none", v, s, lo, hi)
		}
	}
}

// FuzzBounds checks that whatever string Bounds accepts is the partition
// value of both its bounds: it never maps a partition to values routed
// elsewhere.
func FuzzBounds(f *testing.F) {
	for _, s := range []string{"1_5", "-0_0", "NaN", "-Inf", "1_0E-4", "0aff", "", "007", "true", "2026-12-01", "-001-12-31",
		"01-02-03_004", "596-31-23_647", "2025-12-01-12-00-00_123456", "1969-12-31-23-59-59_999999999", "10000-01-01-00-00-00_"} {
		for k := range keyTypes {
			f.Add(s, k)
		}
	}
	f.Fuzz(func(t *testing.T, s string, k int) {
		if k < 0 || k >= len(keyTypes) {
			return
		}
		dt := keyTypes[k]
		lo, hi, ok := Bounds(dt, s)
		if !ok {
			return
		}
		if row.Compare(dt, lo, hi) > 0 {
			t.Fatalf("%s %q: bounds [%v, %v] out of order", dt, s, lo, hi)
		}
		if got := valueString(t, dt, lo); got != s {
			t.Fatalf("%s %q: lower bound %v has the partition value %q", dt, s, lo, got)
		}
		if got := valueString(t, dt, hi); got != s {
			t.Fatalf("%s %q: upper bound %v has the partition value %q", dt, s, hi, got)
		}
	})
}
