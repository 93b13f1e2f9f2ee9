package conformance

// types-roundtrip: every type of PROTOCOL.md §2, with nulls, written and read
// back exactly, through one bucket, several buckets by a bucket key, and
// several buckets round-robin.

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/client"
)

// typeColumns has one column per type of the protocol's table, after id.
var typeColumns = []client.Column{
	{Name: "id", Type: "INT", Nullable: new(false)},
	{Name: "c_boolean", Type: "BOOLEAN"},
	{Name: "c_tinyint", Type: "TINYINT"},
	{Name: "c_smallint", Type: "SMALLINT"},
	{Name: "c_int", Type: "INT"},
	{Name: "c_bigint", Type: "BIGINT"},
	{Name: "c_float", Type: "FLOAT"},
	{Name: "c_double", Type: "DOUBLE"},
	{Name: "c_decimal_10_2", Type: "DECIMAL(10,2)"},
	{Name: "c_decimal_38_10", Type: "DECIMAL(38,10)"},
	{Name: "c_string", Type: "STRING"},
	{Name: "c_varchar", Type: "VARCHAR(20)"},
	{Name: "c_char", Type: "CHAR(5)"},
	{Name: "c_bytes", Type: "BYTES"},
	{Name: "c_binary", Type: "BINARY(4)"},
	{Name: "c_date", Type: "DATE"},
	{Name: "c_time3", Type: "TIME(3)"},
	{Name: "c_time6", Type: "TIME(6)"},
	{Name: "c_ts3", Type: "TIMESTAMP(3)"},
	{Name: "c_ts6", Type: "TIMESTAMP(6)"},
	{Name: "c_ts9", Type: "TIMESTAMP(9)"},
	{Name: "c_ltz3", Type: "TIMESTAMP_LTZ(3)"},
	{Name: "c_ltz6", Type: "TIMESTAMP_LTZ(6)"},
	{Name: "c_array", Type: "ARRAY<INT>"},
	{Name: "c_map", Type: "MAP<STRING,BIGINT>"},
	{Name: "c_row", Type: "ROW<a INT, b STRING>"},
}

func typesRoundtrip(ctx context.Context, env *Env) error {
	cases := []struct {
		name    string
		buckets int
		keyed   bool
		batches [][2]int // [from, to) row ranges, one batch each
	}{
		{"types_1bucket", 1, false, [][2]int{{0, 30}, {30, 60}}},
		{"types_keyed", 3, true, [][2]int{{0, 30}, {30, 60}}},
		{"types_roundrobin", 3, false, [][2]int{{0, 20}, {20, 40}, {40, 60}}},
	}
	for _, tc := range cases {
		if err := typesCase(ctx, env, tc.name, tc.buckets, tc.keyed, tc.batches); err != nil {
			return fmt.Errorf("%s (%d buckets, bucket key: %v): %w", env.Table(tc.name), tc.buckets, tc.keyed, err)
		}
	}
	return nil
}

func typesCase(ctx context.Context, env *Env, name string, buckets int, keyed bool, ranges [][2]int) error {
	spec := client.TableSpec{Table: env.Table(name), Columns: typeColumns, Options: map[string]string{"bucket.num": strconv.Itoa(buckets)}}
	if keyed {
		spec.Options["bucket.key"] = "id"
	}
	info, err := createTable(ctx, env, spec)
	if err != nil {
		return err
	}
	schema, err := info.ArrowSchema()
	if err != nil {
		return err
	}
	recs := make([]arrow.RecordBatch, len(ranges))
	for i, r := range ranges {
		recs[i] = typesBatch(env.Mem, schema, r[0], r[1])
	}
	defer releaseAll(recs)
	want, err := concatRecords(schema, recs, env.Mem)
	if err != nil {
		return err
	}
	defer want.Release()
	if _, err := writeRecords(ctx, env, client.WriteRequest{Table: spec.Table}, recs...); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	got, gotSchema, err := readBuckets(ctx, env, client.ScanRequest{Table: spec.Table})
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	defer releaseMap(got)
	if err := sameSchema(gotSchema, schema); err != nil {
		return err
	}
	if buckets == 1 {
		// One bucket keeps the write order: the read is the written batches.
		if rec := got[0]; rec == nil || !array.RecordEqual(rec, want) {
			return fmt.Errorf("one bucket: the read differs from the write: %w", compareByID(got, want))
		}
		return nil
	}
	return compareByID(got, want)
}

// sameSchema checks a result schema against the expected one: names, types
// and nullability, in order.
func sameSchema(got, want *arrow.Schema) error {
	if got == nil {
		return fmt.Errorf("no result schema")
	}
	if got.NumFields() != want.NumFields() {
		return fmt.Errorf("result schema has %d columns, want %d:\n got %s\nwant %s", got.NumFields(), want.NumFields(), got, want)
	}
	for i, g := range got.Fields() {
		w := want.Field(i)
		if g.Name != w.Name || !arrow.TypeEqual(g.Type, w.Type) || g.Nullable != w.Nullable {
			return fmt.Errorf("result column %d is %s %s (nullable %v), want %s %s (nullable %v)", i, g.Name, g.Type, g.Nullable, w.Name, w.Type, w.Nullable)
		}
	}
	return nil
}

// compareByID checks that the buckets' rows are exactly want's rows, each
// once, where want's row i has id i (an INT or BIGINT column "id").
func compareByID(got map[int]arrow.RecordBatch, want arrow.RecordBatch) error {
	n := want.NumRows()
	seen := make([]bool, n)
	total := int64(0)
	for _, b := range sortedKeys(got) {
		rec := got[b]
		total += rec.NumRows()
		if rec.NumCols() != want.NumCols() {
			return fmt.Errorf("bucket %d: %d columns, want %d", b, rec.NumCols(), want.NumCols())
		}
		idx := rec.Schema().FieldIndices("id")
		if len(idx) != 1 {
			return fmt.Errorf("bucket %d: no id column", b)
		}
		for r := range rec.NumRows() {
			id, err := intValue(rec.Column(idx[0]), r)
			if err != nil {
				return err
			}
			if id < 0 || id >= n {
				return fmt.Errorf("bucket %d row %d: id %d was never written", b, r, id)
			}
			if seen[id] {
				return fmt.Errorf("bucket %d row %d: id %d read twice", b, r, id)
			}
			seen[id] = true
			for c := range rec.NumCols() {
				g, w := rec.Column(int(c)), want.Column(int(c))
				if !array.SliceEqual(g, r, r+1, w, id, id+1) {
					return fmt.Errorf("id %d column %s: read %s, wrote %s", id, want.ColumnName(int(c)), g.ValueStr(int(r)), w.ValueStr(int(id)))
				}
			}
		}
	}
	if total != n {
		for id, ok := range seen {
			if !ok {
				return fmt.Errorf("read %d rows, wrote %d; id %d is missing", total, n, id)
			}
		}
	}
	return nil
}

func intValue(col arrow.Array, i int64) (int64, error) {
	switch c := col.(type) {
	case *array.Int32:
		return int64(c.Value(int(i))), nil
	case *array.Int64:
		return c.Value(int(i)), nil
	}
	return 0, fmt.Errorf("id column is %s, want an integer", col.DataType())
}

// typesBatch builds rows [from, to) of the all-types table. Row 3 mod 7 is
// null in every nullable column, and each column has further nulls of its
// own; rows 1 and 2 hold extreme values.
func typesBatch(mem memory.Allocator, schema *arrow.Schema, from, to int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := from; i < to; i++ {
		for f, field := range schema.Fields() {
			if field.Nullable && (i%7 == 3 || (i+f)%5 == 0) {
				b.Field(f).AppendNull()
				continue
			}
			appendTypeValue(b.Field(f), field.Name, i)
		}
	}
	return b.NewRecordBatch()
}

var (
	maxDecimal38 = new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil), big.NewInt(1))
	e36          = new(big.Int).Exp(big.NewInt(10), big.NewInt(36), nil)
)

func appendTypeValue(bld array.Builder, name string, i int) {
	edge := func(max, min, other int64) int64 {
		switch i {
		case 1:
			return max
		case 2:
			return min
		}
		return other
	}
	switch b := bld.(type) {
	case *array.BooleanBuilder:
		b.Append(i%2 == 0)
	case *array.Int8Builder:
		b.Append(int8(edge(math.MaxInt8, math.MinInt8, int64(i*13-100))))
	case *array.Int16Builder:
		b.Append(int16(edge(math.MaxInt16, math.MinInt16, int64(i*1013-30000))))
	case *array.Int32Builder:
		if name == "id" {
			b.Append(int32(i))
		} else {
			b.Append(int32(edge(math.MaxInt32, math.MinInt32, int64(i*7919-50000))))
		}
	case *array.Int64Builder:
		b.Append(edge(math.MaxInt64, math.MinInt64, int64(i)*1_000_000_007-30_000_000_000))
	case *array.Float32Builder:
		switch i {
		case 1:
			b.Append(float32(math.Inf(1)))
		case 2:
			b.Append(-math.MaxFloat32)
		default:
			b.Append(float32(i)*1.25 - 3)
		}
	case *array.Float64Builder:
		switch i {
		case 1:
			b.Append(math.Inf(-1))
		case 2:
			b.Append(math.SmallestNonzeroFloat64)
		default:
			b.Append(float64(i)*-2.5e-3 + 1e10)
		}
	case *array.Decimal128Builder:
		if b.Type().(*arrow.Decimal128Type).Precision == 10 {
			b.Append(decimal128.FromI64(edge(9_999_999_999, -9_999_999_999, int64(i*123_457-1_000_000))))
			break
		}
		v := new(big.Int).Mul(big.NewInt(int64(i)), e36)
		v.Add(v, big.NewInt(int64(i*7)))
		switch i {
		case 1:
			v = maxDecimal38
		case 2:
			v = new(big.Int).Neg(maxDecimal38)
		}
		if i%2 == 1 && i > 2 {
			v.Neg(v)
		}
		b.Append(decimal128.FromBigInt(v))
	case *array.StringBuilder:
		switch name {
		case "c_char":
			b.Append(fmt.Sprintf("c%04d", i)) // exactly CHAR(5)
		case "c_varchar":
			b.Append(fmt.Sprintf("vä-%d-✓", i))
		default:
			if i%6 == 1 {
				b.Append("")
			} else {
				b.Append(fmt.Sprintf("zürich 東京 %d", i))
			}
		}
	case *array.BinaryBuilder:
		if name == "c_binary" {
			b.Append([]byte{byte(i), 0, 0xff, byte(i >> 8)}) // exactly BINARY(4)
			break
		}
		v := make([]byte, i%9)
		for k := range v {
			v[k] = byte(i*31 + k*0x55)
		}
		b.Append(v)
	case *array.Date32Builder:
		b.Append(arrow.Date32(edge(2_932_896, -719_162, int64(i*997-20_000)))) // 9999-12-31, 0001-01-01
	case *array.Time32Builder:
		b.Append(arrow.Time32(edge(86_399_999, 0, int64(i)*3_723_456%86_400_000)))
	case *array.Time64Builder:
		b.Append(arrow.Time64(edge(86_399_999_999, 0, int64(i)*3_723_456_789%86_400_000_000)))
	case *array.TimestampBuilder:
		ns := edge(4_102_444_800_123_456_789, -2_208_988_800_987_654_321, (1_780_000_000+int64(i)*100_003)*1e9+int64(i)*123_456_789)
		switch b.Type().(*arrow.TimestampType).Unit {
		case arrow.Millisecond:
			ns /= 1e6
		case arrow.Microsecond:
			ns /= 1e3
		}
		b.Append(arrow.Timestamp(ns))
	case *array.ListBuilder:
		b.Append(true)
		vb := b.ValueBuilder().(*array.Int32Builder)
		for k := range i % 4 {
			if k == 1 {
				vb.AppendNull()
			} else {
				vb.Append(int32(i*10 + k))
			}
		}
	case *array.MapBuilder:
		b.Append(true)
		kb, ib := b.KeyBuilder().(*array.StringBuilder), b.ItemBuilder().(*array.Int64Builder)
		for k := range i % 3 {
			kb.Append(fmt.Sprintf("k%d", k))
			if k == 1 {
				ib.AppendNull()
			} else {
				ib.Append(int64(i*1000 + k))
			}
		}
	case *array.StructBuilder:
		b.Append(true)
		ab, sb := b.FieldBuilder(0).(*array.Int32Builder), b.FieldBuilder(1).(*array.StringBuilder)
		if i%3 == 0 {
			ab.AppendNull()
		} else {
			ab.Append(int32(i))
		}
		sb.Append(fmt.Sprintf("b-%d", i))
	default:
		panic(fmt.Sprintf("conformance: no values for column %s of type %s", name, bld.Type()))
	}
}
