package row

import (
	"bytes"
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/row/rowtest"
)

var keyTypes = []arrow.DataType{
	arrow.FixedWidthTypes.Boolean,
	arrow.PrimitiveTypes.Int8,
	arrow.PrimitiveTypes.Int16,
	arrow.PrimitiveTypes.Int32,
	arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Float32,
	arrow.PrimitiveTypes.Float64,
	&arrow.Decimal128Type{Precision: 38, Scale: 4},
	arrow.BinaryTypes.String,
	arrow.BinaryTypes.Binary,
	arrow.FixedWidthTypes.Date32,
	arrow.FixedWidthTypes.Time32ms,
	arrow.FixedWidthTypes.Time64ns,
	arrow.FixedWidthTypes.Timestamp_us,
}

func encodeKey(t testing.TB, types []arrow.DataType, vals []any) []byte {
	t.Helper()
	k, err := EncodeKey(nil, types, vals)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKeyOrder checks the order of keys of increasing values of each type,
// and that they decode back.
func TestKeyOrder(t *testing.T) {
	nan32 := float32(math.NaN())
	tests := []struct {
		t    arrow.DataType
		vals []any
	}{
		{keyTypes[0], []any{false, true}},
		{keyTypes[1], []any{int8(math.MinInt8), int8(-1), int8(0), int8(1), int8(math.MaxInt8)}},
		{keyTypes[2], []any{int16(math.MinInt16), int16(-256), int16(-1), int16(0), int16(255), int16(math.MaxInt16)}},
		{keyTypes[3], []any{int32(math.MinInt32), int32(-1), int32(0), int32(1 << 24), int32(math.MaxInt32)}},
		{keyTypes[4], []any{int64(math.MinInt64), int64(-1 << 40), int64(-1), int64(0), int64(math.MaxInt64)}},
		{keyTypes[5], []any{float32(math.Inf(-1)), float32(-1.5), float32(-math.SmallestNonzeroFloat32), float32(0), float32(math.SmallestNonzeroFloat32), float32(1), float32(math.Inf(1)), nan32}},
		{keyTypes[6], []any{math.Inf(-1), -math.MaxFloat64, -1.0, -math.SmallestNonzeroFloat64, 0.0, math.SmallestNonzeroFloat64, 1.0, math.MaxFloat64, math.Inf(1), math.NaN()}},
		{keyTypes[7], []any{decimal128.New(math.MinInt64, 0), decimal128.New(-1, 0), decimal128.FromI64(-1), decimal128.FromI64(0), decimal128.FromI64(1), decimal128.New(0, math.MaxUint64), decimal128.New(1, 0), decimal128.New(math.MaxInt64, math.MaxUint64)}},
		{keyTypes[8], []any{"", "\x00", "\x00\x00", "\x00\x01", "\x01", "a", "a\x00", "a\x00b", "a\x01", "ab", "b", "\xff", "\xff\xff"}},
		{keyTypes[9], []any{[]byte{}, []byte{0}, []byte{0, 0xff}, []byte{1}, []byte{0xff, 0}, []byte{0xff, 0xff}}},
		{keyTypes[10], []any{arrow.Date32(math.MinInt32), arrow.Date32(-1), arrow.Date32(0), arrow.Date32(19000)}},
		{keyTypes[11], []any{arrow.Time32(0), arrow.Time32(1), arrow.Time32(86399_999)}},
		{keyTypes[12], []any{arrow.Time64(0), arrow.Time64(86399_999_999_999)}},
		{keyTypes[13], []any{arrow.Timestamp(math.MinInt64), arrow.Timestamp(-1), arrow.Timestamp(0), arrow.Timestamp(math.MaxInt64)}},
	}
	for _, tt := range tests {
		types := []arrow.DataType{tt.t}
		var prev []byte
		for i, v := range tt.vals {
			k := encodeKey(t, types, []any{v})
			if i > 0 && bytes.Compare(prev, k) >= 0 {
				t.Errorf("%s: key of %#v (%x) is not above key of %#v (%x)", tt.t, v, k, tt.vals[i-1], prev)
			}
			if i > 0 && Compare(tt.t, tt.vals[i-1], v) >= 0 {
				t.Errorf("%s: Compare(%#v, %#v) >= 0", tt.t, tt.vals[i-1], v)
			}
			got, err := DecodeKey(k, types)
			if err != nil || !Equal(tt.t, got[0], v) {
				t.Errorf("%s: DecodeKey(%x) = %#v, %v; want %#v", tt.t, k, got, err, v)
			}
			prev = k
		}
	}
}

// TestKeyNormalizes checks that values Compare calls equal encode equal.
func TestKeyNormalizes(t *testing.T) {
	for _, pair := range [][2]any{
		{negZero, 0.0},
		{math.NaN(), math.Float64frombits(0xfff8000000000001)},
		{float32(negZero), float32(0)},
		{float32(math.NaN()), math.Float32frombits(0xffc00001)},
	} {
		dt := arrow.DataType(arrow.PrimitiveTypes.Float64)
		if _, ok := pair[0].(float32); ok {
			dt = arrow.PrimitiveTypes.Float32
		}
		types := []arrow.DataType{dt}
		if a, b := encodeKey(t, types, pair[:1]), encodeKey(t, types, pair[1:]); !bytes.Equal(a, b) {
			t.Errorf("%v and %v encode as %x and %x", pair[0], pair[1], a, b)
		}
	}
}

// TestKeyProperties checks on random tuples that key byte order is tuple
// order, that a tuple prefix encodes to a byte prefix, and that keys decode
// back.
func TestKeyProperties(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		types := make([]arrow.DataType, 1+rnd.IntN(4))
		for i := range types {
			types[i] = keyTypes[rnd.IntN(len(keyTypes))]
		}
		a, b := randTuple(rnd, types), randTuple(rnd, types)
		if rnd.IntN(4) == 0 { // share a prefix, to exercise later columns
			copy(b, a[:rnd.IntN(len(a)+1)])
		}
		ka, kb := encodeKey(t, types, a), encodeKey(t, types, b)
		if got, want := cmp.Compare(bytes.Compare(ka, kb), 0), compareTuples(types, a, b); got != want {
			t.Fatalf("%v: keys of %#v and %#v compare %d, tuples %d\n%x\n%x", types, a, b, got, want, ka, kb)
		}
		k := rnd.IntN(len(types) + 1)
		if p := encodeKey(t, types[:k], a[:k]); !bytes.HasPrefix(ka, p) {
			t.Fatalf("%v: key of %#v (%x) does not start with the key of its first %d values (%x)", types, a, ka, k, p)
		}
		got, err := DecodeKey(ka, types)
		if err != nil || compareTuples(types, got, a) != 0 {
			t.Fatalf("%v: DecodeKey(%x) = %#v, %v; want %#v", types, ka, got, err, a)
		}
	}
}

func compareTuples(types []arrow.DataType, a, b []any) int {
	for i, t := range types {
		if c := Compare(t, a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

func randTuple(rnd *rand.Rand, types []arrow.DataType) []any {
	vals := make([]any, len(types))
	for i, t := range types {
		vals[i] = randKeyValue(rnd, t)
	}
	return vals
}

// randKeyValue returns a random value of t, drawn half the time from a few
// values, so that ties and edge values are common.
func randKeyValue(rnd *rand.Rand, t arrow.DataType) any {
	u := rnd.Uint64()
	if rnd.IntN(2) == 0 {
		u = []uint64{0, 1, math.MaxUint64, 1 << 63, 1<<63 - 1, 1 << 31, 1<<31 - 1, 1 << 15, 1 << 7}[rnd.IntN(9)]
	}
	if v, ok := rowtest.FromBits(t, u); ok {
		return v
	}
	switch t.ID() {
	case arrow.FLOAT32, arrow.FLOAT64:
		specials := []float64{math.Inf(-1), -1, negZero, 0, math.SmallestNonzeroFloat64, 1, math.Inf(1), math.NaN(), math.Float64frombits(0xfff8000000000000)}
		f := rnd.NormFloat64() * 1e6
		if rnd.IntN(2) == 0 {
			f = specials[rnd.IntN(len(specials))]
		}
		if t.ID() == arrow.FLOAT32 {
			return float32(f)
		}
		return f
	case arrow.DECIMAL128:
		return decimal128.New(int64(u)>>rnd.IntN(64), rnd.Uint64()>>rnd.IntN(65))
	case arrow.STRING:
		return string(randBytes(rnd))
	case arrow.BINARY:
		return randBytes(rnd)
	}
	panic(t)
}

func randBytes(rnd *rand.Rand) []byte {
	b := make([]byte, rnd.IntN(4))
	for i := range b {
		b[i] = "\x00\x01a\xff"[rnd.IntN(4)]
	}
	return b
}

func TestEncodeKeyErrors(t *testing.T) {
	i64 := arrow.PrimitiveTypes.Int64
	tests := []struct {
		name  string
		types []arrow.DataType
		vals  []any
	}{
		{"null", []arrow.DataType{i64}, []any{nil}},
		{"wrong Go type", []arrow.DataType{i64}, []any{int32(1)}},
		{"nested type", []arrow.DataType{arrow.ListOf(i64)}, []any{[]any{int64(1)}}},
		{"unsupported type", []arrow.DataType{arrow.PrimitiveTypes.Uint8}, []any{uint8(1)}},
		{"too few values", []arrow.DataType{i64, i64}, []any{int64(1)}},
	}
	for _, tt := range tests {
		dst := []byte("prefix")
		got, err := EncodeKey(dst, tt.types, tt.vals)
		if errs.KindOf(err) != errs.InvalidArgument || string(got) != "prefix" {
			t.Errorf("%s: EncodeKey = %q, %v; want the prefix and an invalid-argument error", tt.name, got, err)
		}
	}
}

func TestDecodeKeyErrors(t *testing.T) {
	str, i32 := arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32
	tests := []struct {
		name  string
		in    []byte
		types []arrow.DataType
	}{
		{"short int", []byte{0x80, 0, 0}, []arrow.DataType{i32}},
		{"trailing bytes", []byte{0x80, 0, 0, 0, 0}, []arrow.DataType{i32}},
		{"unterminated string", []byte("ab"), []arrow.DataType{str}},
		{"lone zero", []byte("ab\x00"), []arrow.DataType{str}},
		{"bad escape", []byte("a\x00\x02"), []arrow.DataType{str}},
		{"bool byte", []byte{2}, []arrow.DataType{arrow.FixedWidthTypes.Boolean}},
		{"short decimal", make([]byte, 15), []arrow.DataType{&arrow.Decimal128Type{Precision: 10}}},
		{"nested type", []byte{0}, []arrow.DataType{arrow.ListOf(i32)}},
	}
	for _, tt := range tests {
		if _, err := DecodeKey(tt.in, tt.types); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", tt.name, err)
		}
	}
}

func FuzzDecodeKey(f *testing.F) {
	types := []arrow.DataType{keyTypes[8], keyTypes[4], keyTypes[6], keyTypes[9], keyTypes[7], keyTypes[0], keyTypes[5]}
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		f.Add(encodeKey(f, types, randTuple(rnd, types)))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		vals, err := DecodeKey(in, types)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		again, err := DecodeKey(encodeKey(t, types, vals), types)
		if err != nil || compareTuples(types, vals, again) != 0 {
			t.Fatalf("re-encoding changed the key: %#v\n%#v, %v", vals, again, err)
		}
	})
}
