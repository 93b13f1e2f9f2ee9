package row

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fluxgate-io/fluxgate/sqltype"
)

// column is a test column: a name and a Flink SQL type, or an Arrow type for
// the Arrow types the protocol does not use.
type column struct {
	name, sql string
	arrow     arrow.DataType
}

func schemaOf(t testing.TB, cols []column) *arrow.Schema {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		dt := c.arrow
		if dt == nil {
			st, err := sqltype.Parse(c.sql)
			if err != nil {
				t.Fatal(err)
			}
			dt = st.Arrow()
		}
		fields[i] = arrow.Field{Name: c.name, Type: dt, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

func typesOf(s *arrow.Schema) []arrow.DataType {
	types := make([]arrow.DataType, s.NumFields())
	for i, f := range s.Fields() {
		types[i] = f.Type
	}
	return types
}

var negZero = math.Copysign(0, -1)

// protocolColumns has every type of PROTOCOL.md §2; protocolRows fills them
// with ordinary values, NULLs, edge values and nested NULLs.
var protocolColumns = []column{
	{name: "b", sql: "BOOLEAN"},
	{name: "i8", sql: "TINYINT"},
	{name: "i16", sql: "SMALLINT"},
	{name: "i32", sql: "INT"},
	{name: "i64", sql: "BIGINT"},
	{name: "f32", sql: "FLOAT"},
	{name: "f64", sql: "DOUBLE"},
	{name: "d10", sql: "DECIMAL(10,2)"},
	{name: "d38", sql: "DECIMAL(38,10)"},
	{name: "s", sql: "STRING"},
	{name: "vc", sql: "VARCHAR(10)"},
	{name: "by", sql: "BYTES"},
	{name: "bin", sql: "BINARY(4)"},
	{name: "dt", sql: "DATE"},
	{name: "t3", sql: "TIME(3)"},
	{name: "t6", sql: "TIME(6)"},
	{name: "t9", sql: "TIME(9)"},
	{name: "ts3", sql: "TIMESTAMP(3)"},
	{name: "ts6", sql: "TIMESTAMP"},
	{name: "ts9", sql: "TIMESTAMP(9)"},
	{name: "ltz", sql: "TIMESTAMP_LTZ(3)"},
	{name: "arr", sql: "ARRAY<INT>"},
	{name: "m", sql: "MAP<STRING, BIGINT>"},
	{name: "r", sql: "ROW<a INT, b STRING>"},
	{name: "nest", sql: "ARRAY<ROW<x BIGINT, y ARRAY<STRING>>>"},
	{name: "mm", sql: "MAP<INT, ARRAY<DOUBLE NOT NULL>>"},
}

var protocolRows = []Row{
	{true, int8(1), int16(2), int32(3), int64(4), float32(1.5), 2.25, decimal128.FromI64(12345), decimal128.FromI64(-7),
		"hello", "vc", []byte{1, 2, 3}, []byte("abcd"), arrow.Date32(19000), arrow.Time32(3600_000), arrow.Time64(1),
		arrow.Time64(86399_999_999_999), arrow.Timestamp(1_700_000_000_000), arrow.Timestamp(1_700_000_000_000_000),
		arrow.Timestamp(-1), arrow.Timestamp(0),
		[]any{int32(1), int32(2)}, MapValue{{"k", int64(10)}}, []any{int32(1), "one"},
		[]any{[]any{int64(5), []any{"p", "q"}}}, MapValue{{int32(1), []any{0.5, 1.5}}}},
	make(Row, len(protocolColumns)),
	{false, int8(math.MinInt8), int16(math.MinInt16), int32(math.MinInt32), int64(math.MinInt64),
		float32(math.Inf(-1)), negZero, decimal128.FromI64(-99999999), decimal128.New(-1, 5),
		"", "", []byte{}, []byte{0, 0, 0, 0}, arrow.Date32(-1), arrow.Time32(0), arrow.Time64(0), arrow.Time64(0),
		arrow.Timestamp(math.MinInt64), arrow.Timestamp(-1), arrow.Timestamp(0), arrow.Timestamp(-5),
		[]any{}, MapValue{}, []any{nil, nil},
		[]any{nil, []any{int64(1), nil}, []any{nil, []any{}}}, MapValue{{int32(1), nil}, {int32(2), []any{}}}},
	{true, int8(math.MaxInt8), int16(math.MaxInt16), int32(math.MaxInt32), int64(math.MaxInt64),
		float32(math.MaxFloat32), math.Inf(1), decimal128.FromI64(99999999), decimal128.New(math.MaxInt64>>2, 0),
		"nul\x00in the middle, ünïcödé", strings.Repeat("x", 10), []byte{0, 0xff, 0}, []byte{0xff, 0, 1, 2},
		arrow.Date32(math.MaxInt32), arrow.Time32(86399_999), arrow.Time64(86399_999_999), arrow.Time64(7),
		arrow.Timestamp(math.MaxInt64), arrow.Timestamp(1), arrow.Timestamp(2), arrow.Timestamp(3),
		[]any{int32(1), nil, int32(3)}, MapValue{{"a", int64(1)}, {"b", nil}}, []any{int32(7), "x"},
		[]any{[]any{nil, []any{nil, "", "z"}}}, MapValue{{int32(-1), []any{negZero}}}},
}

// extraColumns are Arrow types a client could send that the protocol's own
// types do not produce.
var extraColumns = []column{
	{name: "ls", arrow: arrow.BinaryTypes.LargeString},
	{name: "sv", arrow: arrow.BinaryTypes.StringView},
	{name: "lb", arrow: arrow.BinaryTypes.LargeBinary},
	{name: "bv", arrow: arrow.BinaryTypes.BinaryView},
	{name: "fsb", arrow: &arrow.FixedSizeBinaryType{ByteWidth: 3}},
	{name: "ll", arrow: arrow.LargeListOf(arrow.PrimitiveTypes.Int16)},
}

var extraRows = []Row{
	{"large", "a view longer than twelve bytes", []byte("lb"), []byte("a binary view longer than twelve"), []byte{1, 2, 3}, []any{int16(1), nil}},
	make(Row, len(extraColumns)),
	{"", "", []byte{}, []byte{}, []byte{0, 0, 0}, []any{}},
}

func buildRecord(t testing.TB, mem memory.Allocator, schema *arrow.Schema, rows []Row) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, r := range rows {
		AppendRow(b, r)
	}
	return b.NewRecordBatch()
}

func equalRows(types []arrow.DataType, a, b Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !Equal(types[i], a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		cols []column
		rows []Row
	}{
		{"protocol types", protocolColumns, protocolRows},
		{"other arrow types", extraColumns, extraRows},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			schema := schemaOf(t, tt.cols)
			types := typesOf(schema)
			in := buildRecord(t, mem, schema, tt.rows)
			defer in.Release()

			out := array.NewRecordBuilder(mem, schema)
			defer out.Release()
			direct := array.NewRecordBuilder(mem, schema) // through DecodeTo
			defer direct.Release()
			want := make([]bool, len(types))
			for i := range want {
				want[i] = true
			}
			columns := NewColumnDecoder(types, want, mem) // and through a ColumnDecoder
			defer columns.Release()
			var buf []byte
			for i, want := range tt.rows {
				got := FromRecord(in, i, nil)
				if !equalRows(types, got, want) {
					t.Fatalf("row %d from Arrow:\n got %v\nwant %v", i, got, want)
				}
				buf = Encode(buf[:0], 3, types, got)
				sid, dec, err := Decode(buf, types)
				if err != nil || sid != 3 {
					t.Fatalf("row %d: Decode = schema %d, %v", i, sid, err)
				}
				if !equalRows(types, dec, want) {
					t.Fatalf("row %d decoded:\n got %v\nwant %v", i, dec, want)
				}
				AppendRow(out, dec)
				if err := DecodeTo(buf, types, direct.Fields()); err != nil {
					t.Fatalf("row %d: DecodeTo: %v", i, err)
				}
				if err := columns.Decode(buf); err != nil {
					t.Fatalf("row %d: ColumnDecoder: %v", i, err)
				}
			}
			rec := out.NewRecordBatch()
			defer rec.Release()
			if !array.RecordEqual(in, rec) {
				t.Fatalf("round trip changed the record:\n in %v\nout %v", in, rec)
			}
			drec := direct.NewRecordBatch()
			defer drec.Release()
			if !array.RecordEqual(in, drec) {
				t.Fatalf("DecodeTo changed the record:\n in %v\nout %v", in, drec)
			}
			decoded := columns.Columns()
			crec := array.NewRecordBatch(schema, decoded, int64(len(tt.rows)))
			defer crec.Release()
			for _, c := range decoded {
				c.Release()
			}
			if !array.RecordEqual(in, crec) {
				t.Fatalf("ColumnDecoder changed the record:\n in %v\nout %v", in, crec)
			}

			// Rows of a slice, and projected rows.
			sl := in.NewSlice(1, in.NumRows())
			defer sl.Release()
			for i := range sl.NumRows() {
				if got, want := FromRecord(sl, int(i), nil), tt.rows[i+1]; !equalRows(types, got, want) {
					t.Fatalf("row %d of the slice:\n got %v\nwant %v", i, got, want)
				}
			}
			cols := []int{len(types) - 1, 0}
			got := FromRecord(in, 0, cols)
			if len(got) != 2 || !Equal(types[cols[0]], got[0], tt.rows[0][cols[0]]) || !Equal(types[0], got[1], tt.rows[0][0]) {
				t.Fatalf("projected row = %v", got)
			}
		})
	}
}

// TestAppendMatchesArrow checks that the nested values Append builds are the
// arrays Arrow's own JSON reader builds.
func TestAppendMatchesArrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := schemaOf(t, protocolColumns)
	rec := buildRecord(t, mem, schema, protocolRows)
	defer rec.Release()
	for col, js := range map[int]string{
		21: `[[1, 2], null, [], [1, null, 3]]`,
		22: `[[{"key": "k", "value": 10}], null, [], [{"key": "a", "value": 1}, {"key": "b", "value": null}]]`,
		23: `[{"a": 1, "b": "one"}, null, {"a": null, "b": null}, {"a": 7, "b": "x"}]`,
	} {
		want, _, err := array.FromJSON(mem, schema.Field(col).Type, strings.NewReader(js))
		if err != nil {
			t.Fatal(err)
		}
		if !array.Equal(rec.Column(col), want) {
			t.Errorf("column %s:\n got %v\nwant %v", schema.Field(col).Name, rec.Column(col), want)
		}
		want.Release()
	}
}

// TestGetCopies checks that values do not alias the Arrow buffers they came
// from.
func TestGetCopies(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, dt := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.Binary} {
		b := array.NewBuilder(mem, dt)
		Append(b, map[bool]any{true: "abc", false: []byte("abc")}[dt.ID() == arrow.STRING])
		arr := b.NewArray()
		v := Get(arr, 0)
		data := arr.Data().Buffers()[2].Bytes()
		copy(data, "xyz")
		if s, ok := v.(string); ok && s != "abc" || !ok && string(v.([]byte)) != "abc" {
			t.Errorf("%s: value changed with its buffer: %q", dt, v)
		}
		arr.Release()
		b.Release()
	}
}

func TestCompareEqual(t *testing.T) {
	f64, str := arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String
	dec := &arrow.Decimal128Type{Precision: 38, Scale: 2}
	tests := []struct {
		t    arrow.DataType
		a, b any
		want int
	}{
		{f64, nil, 1.0, -1},
		{f64, nil, nil, 0},
		{f64, math.Inf(1), math.NaN(), -1},
		{f64, math.NaN(), math.NaN(), 0},
		{f64, negZero, 0.0, 0},
		{f64, -1.0, negZero, -1},
		{arrow.PrimitiveTypes.Float32, float32(math.NaN()), float32(1), 1},
		{dec, decimal128.New(-1, 0), decimal128.FromI64(-1), -1},
		{dec, decimal128.FromI64(100), decimal128.FromI64(99), 1},
		{str, "a", "a\x00", -1},
		{str, "a\x00", "ab", -1},
		{arrow.BinaryTypes.Binary, []byte{}, []byte{0}, -1},
		{arrow.FixedWidthTypes.Boolean, false, true, -1},
		{arrow.PrimitiveTypes.Int8, int8(-128), int8(127), -1},
		{arrow.FixedWidthTypes.Date32, arrow.Date32(-1), arrow.Date32(0), -1},
		{arrow.FixedWidthTypes.Time64ns, arrow.Time64(2), arrow.Time64(2), 0},
		{arrow.FixedWidthTypes.Timestamp_us, arrow.Timestamp(3), arrow.Timestamp(2), 1},
	}
	for _, tt := range tests {
		if got := Compare(tt.t, tt.a, tt.b); got != tt.want {
			t.Errorf("Compare(%s, %v, %v) = %d, want %d", tt.t, tt.a, tt.b, got, tt.want)
		}
		if got := Compare(tt.t, tt.b, tt.a); got != -tt.want {
			t.Errorf("Compare(%s, %v, %v) = %d, want %d", tt.t, tt.b, tt.a, got, -tt.want)
		}
		if got := Equal(tt.t, tt.a, tt.b); got != (tt.want == 0) {
			t.Errorf("Equal(%s, %v, %v) = %v", tt.t, tt.a, tt.b, got)
		}
	}

	schema := schemaOf(t, protocolColumns)
	nested := []struct {
		col  int
		a, b any
	}{
		{21, []any{int32(1)}, []any{int32(1), nil}},
		{21, []any{nil}, []any{int32(0)}},
		{22, MapValue{{"a", int64(1)}}, MapValue{{"a", nil}}},
		{22, MapValue{{"a", int64(1)}}, MapValue{{"b", int64(1)}}},
		{23, []any{int32(1), "x"}, []any{int32(1), "y"}},
		{24, []any{[]any{int64(1), []any{"a"}}}, []any{[]any{int64(1), []any{"b"}}}},
		{24, []any{}, nil},
	}
	for _, tt := range nested {
		dt := schema.Field(tt.col).Type
		if !Equal(dt, tt.a, tt.a) || Equal(dt, tt.a, tt.b) || Equal(dt, tt.b, tt.a) {
			t.Errorf("Equal(%s) of %v and %v is wrong", dt, tt.a, tt.b)
		}
	}
}
