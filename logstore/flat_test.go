package logstore

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Columns of every flat type decode straight from their buffers, and the
// rest through arrow-go's IPC reader, to what was appended: with and without
// NULLs, from a sliced batch, stored raw, whole or compressed by buffer.
func TestColumnsOfEveryLayoutRoundTrip(t *testing.T) {
	mem := checkedMem(t)
	columns := []struct {
		dt   arrow.DataType
		json string // four values, repeated
	}{
		{arrow.PrimitiveTypes.Int8, `[1, null, -3, 4]`},
		{arrow.PrimitiveTypes.Uint16, `[1, 2, 3, 65535]`},
		{arrow.PrimitiveTypes.Int32, `[7, null, null, -7]`},
		{arrow.PrimitiveTypes.Int64, `[1, 2, 3, 4]`},
		{arrow.PrimitiveTypes.Float32, `[1.5, null, -0.25, 3]`},
		{arrow.PrimitiveTypes.Float64, `[1.5, 2.5, null, 4]`},
		{arrow.FixedWidthTypes.Boolean, `[true, null, false, true]`},
		{arrow.FixedWidthTypes.Date32, `[1, null, 19000, 3]`},
		{arrow.FixedWidthTypes.Timestamp_ms, `[1, 2, null, 4]`},
		{&arrow.Decimal128Type{Precision: 10, Scale: 2}, `["1.23", null, "-4.56", "7.00"]`},
		{&arrow.FixedSizeBinaryType{ByteWidth: 2}, `["YWI=", null, "Y2Q=", "ZWY="]`},
		{arrow.BinaryTypes.String, `["a", null, "", "dddd"]`},
		{arrow.BinaryTypes.Binary, `["YQ==", null, "", "ZGQ="]`},
		{arrow.BinaryTypes.LargeString, `["x", "y", null, "zz"]`},
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1, 2], null, [], [3]]`}, // through the IPC reader
	}
	var fields []arrow.Field
	var cols []arrow.Array
	for i, c := range columns {
		one, _, err := array.FromJSON(mem, c.dt, strings.NewReader(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.dt, err)
		}
		many := make([]arrow.Array, 1000)
		for k := range many {
			many[k] = one
		}
		col, err := array.Concatenate(many, mem)
		one.Release()
		if err != nil {
			t.Fatal(err)
		}
		fields = append(fields, arrow.Field{Name: string(rune('a' + i)), Type: c.dt, Nullable: true})
		cols = append(cols, col)
	}
	schema := arrow.NewSchema(fields, nil)
	whole := array.NewRecordBatch(schema, cols, 4000)
	for _, c := range cols {
		c.Release()
	}
	defer whole.Release()
	for _, codec := range []Codec{CodecNone, CodecLZ4, CodecZstd} {
		for _, rec := range []arrow.RecordBatch{whole, whole.NewSlice(3, 3997), whole.NewSlice(1, 2)} {
			tbl := mustOpen(t, t.TempDir(), 1, Options{})
			enc, err := NewEncoder(schema, codec, 3, mem)
			if err != nil {
				t.Fatal(err)
			}
			b, err := enc.Encode(rec, BatchMeta{SchemaID: 1, WriterSeq: -1})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tbl.Append([]Part{{Bucket: 0, Batch: b}}, Writer{}); err != nil {
				t.Fatal(err)
			}
			dec := NewDecoder(schema, mem)
			eachFrame(t, tbl, func(f *Frame) {
				got, err := f.Record(dec, schema)
				if err != nil {
					t.Fatalf("%s, %d rows: %v", codec, rec.NumRows(), err)
				}
				for i := range columns {
					if !array.Equal(got.Column(i), rec.Column(i)) {
						t.Errorf("%s, %d rows: column %s reads\n%v\nwant\n%v", codec, rec.NumRows(), columns[i].dt, got.Column(i), rec.Column(i))
					}
				}
				got.Release()
			})
			tbl.Close()
			if rec != whole {
				rec.Release()
			}
		}
	}
}
