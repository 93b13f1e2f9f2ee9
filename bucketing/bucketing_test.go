package bucketing

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/murmur3"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// column is one column of a test batch, its values as Arrow JSON.
type column struct {
	dt   arrow.DataType
	json string
}

// batch builds a record batch from columns named c0, c1, ...
func batch(t testing.TB, mem memory.Allocator, cols ...column) arrow.RecordBatch {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: c.dt, Nullable: true}
		arr, _, err := array.FromJSON(mem, c.dt, strings.NewReader(c.json))
		if err != nil {
			t.Fatalf("column %d (%s) from %s: %v", i, c.dt, c.json, err)
		}
		defer arr.Release()
		arrs[i] = arr
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(arrs[0].Len()))
}

// assign returns the buckets of rec's rows, keyed by keyCols.
func assign(t testing.TB, rec arrow.RecordBatch, keyCols []int, n int) []int32 {
	t.Helper()
	a, err := NewAssigner(rec.Schema(), keyCols, n)
	if err != nil {
		t.Fatal(err)
	}
	return a.Assign(rec, nil)
}

// Test vectors of the Iceberg spec, Appendix B, checked through Assign. With
// MaxInt32 buckets the bucket is the hash's low 31 bits, all bucket[N] uses.
func TestSpecVectors(t *testing.T) {
	tz := func(u arrow.TimeUnit) arrow.DataType { return &arrow.TimestampType{Unit: u, TimeZone: "UTC"} }
	ts := func(u arrow.TimeUnit) arrow.DataType { return &arrow.TimestampType{Unit: u} }
	for _, tc := range []struct {
		dt   arrow.DataType
		json string
		hash int32
	}{
		{arrow.PrimitiveTypes.Int8, `[34]`, 2017239379},
		{arrow.PrimitiveTypes.Int16, `[34]`, 2017239379},
		{arrow.PrimitiveTypes.Int32, `[34]`, 2017239379},
		{arrow.PrimitiveTypes.Int64, `[34]`, 2017239379},
		{&arrow.Decimal128Type{Precision: 4, Scale: 2}, `["14.20"]`, -500754589},
		{arrow.FixedWidthTypes.Date32, `["2017-11-16"]`, -653330422},
		{arrow.FixedWidthTypes.Time32ms, `["22:31:08"]`, -662762989},
		{arrow.FixedWidthTypes.Time64us, `["22:31:08"]`, -662762989},
		{arrow.FixedWidthTypes.Time64ns, `["22:31:08"]`, -662762989},
		{ts(arrow.Second), `["2017-11-16T22:31:08"]`, -2047944441},
		{ts(arrow.Millisecond), `["2017-11-16T22:31:08"]`, -2047944441},
		{ts(arrow.Microsecond), `["2017-11-16T22:31:08"]`, -2047944441},
		{ts(arrow.Nanosecond), `["2017-11-16T22:31:08"]`, -2047944441},
		{ts(arrow.Nanosecond), `["2017-11-16T22:31:08.000001001"]`, -1207196810}, // timestamp_ns: floored to micros
		{tz(arrow.Microsecond), `["2017-11-16T14:31:08-08:00"]`, -2047944441},
		{tz(arrow.Millisecond), `["2017-11-16T14:31:08-08:00"]`, -2047944441},
		{arrow.BinaryTypes.String, `["iceberg"]`, 1210000089},
		{arrow.BinaryTypes.LargeString, `["iceberg"]`, 1210000089},
		{arrow.BinaryTypes.StringView, `["iceberg"]`, 1210000089},
		{arrow.BinaryTypes.Binary, `["AAECAw=="]`, -188683207},
		{arrow.BinaryTypes.LargeBinary, `["AAECAw=="]`, -188683207},
		{arrow.BinaryTypes.BinaryView, `["AAECAw=="]`, -188683207},
		{&arrow.FixedSizeBinaryType{ByteWidth: 4}, `["AAECAw=="]`, -188683207},
		{arrow.FixedWidthTypes.Boolean, `[true]`, 1392991556},
		{arrow.PrimitiveTypes.Float32, `[1.0]`, -142385009},
		{arrow.PrimitiveTypes.Float32, `[0.0]`, 1669671676},
		{arrow.PrimitiveTypes.Float64, `[1.0]`, -142385009},
		{arrow.PrimitiveTypes.Float64, `[0.0]`, 1669671676},
	} {
		t.Run(fmt.Sprintf("%s/%s", tc.dt, tc.json), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			rec := batch(t, mem, column{tc.dt, tc.json})
			defer rec.Release()
			want := int32(BucketOf(uint32(tc.hash), math.MaxInt32))
			if got := assign(t, rec, []int{0}, math.MaxInt32)[0]; got != want {
				t.Errorf("bucket %d, want %d (hash %d)", got, want, tc.hash)
			}
		})
	}
}

// JSON cannot carry -0.0 or NaN payloads, so these are built directly.
func TestFloatCanonicalization(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b64 := array.NewFloat64Builder(mem)
	defer b64.Release()
	b64.AppendValues([]float64{0, math.Copysign(0, -1), math.NaN(), math.Float64frombits(0xfff0000000000123)}, nil)
	b32 := array.NewFloat32Builder(mem)
	defer b32.Release()
	b32.AppendValues([]float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), math.Float32frombits(0xffc00001)}, nil)
	for _, b := range []array.Builder{b64, b32} {
		arr := b.NewArray()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "f", Type: arr.DataType()}}, nil), []arrow.Array{arr}, int64(arr.Len()))
		arr.Release()
		got := assign(t, rec, []int{0}, math.MaxInt32)
		rec.Release()
		zero := int32(BucketOf(uint32(1669671676), math.MaxInt32))
		if got[0] != zero || got[1] != zero {
			t.Errorf("%s: 0.0 and -0.0 in buckets %v, want both %d", arr.DataType(), got[:2], zero)
		}
		if got[2] != got[3] {
			t.Errorf("%s: NaNs in buckets %v, want equal", arr.DataType(), got[2:])
		}
	}
}

func TestMurmur3(t *testing.T) {
	le34 := binary.LittleEndian.AppendUint64(nil, 34)
	for _, tc := range []struct {
		in   []byte
		want int32 // as the spec writes them: Java ints
	}{
		{nil, 0},
		{le34, 2017239379},
		{[]byte("iceberg"), 1210000089},
		{[]byte{0, 1, 2, 3}, -188683207},
		{[]byte("hello"), 0x248bfa47},
		{[]byte("The quick brown fox jumps over the lazy dog"), 0x2e4ff723},
	} {
		if got := int32(murmur3.Sum32(tc.in)); got != tc.want {
			t.Errorf("murmur3.Sum32(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestMinBigEndian(t *testing.T) {
	for _, tc := range []struct {
		hi   int64
		lo   uint64
		want string
	}{
		{0, 0, "00"},
		{0, 1420, "058c"},
		{0, 127, "7f"},
		{0, 128, "0080"},
		{0, 255, "00ff"},
		{-1, math.MaxUint64, "ff"}, // -1
		{-1, 1<<64 - 128, "80"},    // -128
		{-1, 1<<64 - 129, "ff7f"},  // -129
		{0, 1 << 63, "008000000000000000"},
		{math.MinInt64, 0, "80000000000000000000000000000000"},
	} {
		if got := fmt.Sprintf("%x", appendMinBigEndian(nil, tc.hi, tc.lo)); got != tc.want {
			t.Errorf("%d:%d = %s, want %s", tc.hi, tc.lo, got, tc.want)
		}
	}
}

func TestMultiColumnAndNulls(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := batch(t, mem,
		column{arrow.PrimitiveTypes.Int64, `[34, 34, null, null, 7]`},
		column{arrow.BinaryTypes.String, `["iceberg", null, "iceberg", null, "x"]`},
	)
	defer rec.Release()
	const n = 1024
	h := func(parts ...[]byte) int32 {
		return int32(BucketOf(murmur3.Sum32(bytes.Join(parts, nil)), n))
	}
	le := func(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
	want := []int32{
		h(le(34), []byte("iceberg")), // the concatenation of both serializations
		h(le(34)),                    // a NULL component adds no bytes
		h([]byte("iceberg")),
		0, // all NULL: the hash of no bytes is 0
		h(le(7), []byte("x")),
	}
	if got := assign(t, rec, []int{0, 1}, n); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("buckets %v, want %v", got, want)
	}
	// Key order matters, as in Iceberg's multi-argument hash.
	if got := assign(t, rec, []int{1, 0}, n)[0]; got != h([]byte("iceberg"), le(34)) {
		t.Errorf("reversed key: bucket %d", got)
	}
	// A slice of the batch keeps each row's bucket (array offsets honored).
	sl := rec.NewSlice(1, 5)
	defer sl.Release()
	if got := assign(t, sl, []int{0, 1}, n); fmt.Sprint(got) != fmt.Sprint(want[1:]) {
		t.Errorf("slice buckets %v, want %v", got, want[1:])
	}
}

// Nanoseconds floor to microseconds, as Iceberg's nanosToMicros (Math.floorDiv).
func TestNanosFloor(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := batch(t, mem,
		column{arrow.FixedWidthTypes.Timestamp_ns, `[-1, -1000, -1001, 1999]`},
		column{arrow.FixedWidthTypes.Timestamp_us, `[-1, -1, -2, 1]`},
	)
	defer rec.Release()
	ns, us := assign(t, rec, []int{0}, 1024), assign(t, rec, []int{1}, 1024)
	if fmt.Sprint(ns) != fmt.Sprint(us) {
		t.Errorf("ns buckets %v, want the us buckets %v", ns, us)
	}
}

func TestDistribution(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := range 1000 {
		b.Append(int64(i))
	}
	arr := b.NewInt64Array()
	defer arr.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "k", Type: arr.DataType()}}, nil), []arrow.Array{arr}, int64(arr.Len()))
	defer rec.Release()
	out := make([]int32, 0, 2000)
	got := assign(t, rec, []int{0}, 4)
	a, _ := NewAssigner(rec.Schema(), []int{0}, 4)
	if reused := a.Assign(rec, out); &reused[0] != &out[:1][0] {
		t.Error("Assign did not reuse out")
	}
	var counts [4]int
	for _, bk := range got {
		counts[bk]++
	}
	for bk, c := range counts {
		if c < 150 { // expect ~250 each
			t.Errorf("bucket %d has %d of 1000 keys: %v", bk, c, counts)
		}
	}
}

func TestNewAssignerErrors(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String)},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32})},
		{Name: "u", Type: arrow.PrimitiveTypes.Uint32},
	}, nil)
	for _, tc := range []struct {
		keys []int
		n    int
	}{
		{[]int{1}, 4},
		{[]int{0, 2}, 4},
		{[]int{3}, 4},
		{[]int{4}, 4},
		{[]int{-1}, 4},
		{nil, 4},
		{[]int{0}, 0},
		{[]int{0}, math.MaxInt32 + 1},
	} {
		_, err := NewAssigner(schema, tc.keys, tc.n)
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.InvalidArgument {
			t.Errorf("NewAssigner(%v, %d) = %v, want an Invalid error", tc.keys, tc.n, err)
		}
	}
}

func BenchmarkAssign(b *testing.B) {
	const rows = 64 << 10
	mem := memtest.Allocator(b)
	bld := array.NewInt64Builder(mem)
	defer bld.Release()
	for i := range rows {
		bld.Append(int64(i) * 7919)
	}
	arr := bld.NewInt64Array()
	defer arr.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "k", Type: arr.DataType()}}, nil), []arrow.Array{arr}, rows)
	defer rec.Release()
	a, err := NewAssigner(rec.Schema(), []int{0}, 16)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]int32, rows)
	b.SetBytes(rows * 8)
	b.ReportAllocs()
	for b.Loop() {
		out = a.Assign(rec, out)
	}
}
