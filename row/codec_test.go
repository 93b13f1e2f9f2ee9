package row

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

func protocolTypes(t testing.TB) []arrow.DataType { return typesOf(schemaOf(t, protocolColumns)) }

func TestDecodeRejectsTruncated(t *testing.T) {
	types := protocolTypes(t)
	for i, r := range protocolRows {
		enc := Encode(nil, 1, types, r)
		for n := range len(enc) {
			if _, _, err := Decode(enc[:n], types); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("row %d cut to %d of %d bytes: err = %v", i, n, len(enc), err)
			}
		}
		if _, _, err := Decode(append(enc, 0), types); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("row %d with a trailing byte: err = %v", i, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	i32 := []arrow.DataType{arrow.PrimitiveTypes.Int32}
	list := []arrow.DataType{arrow.ListOf(arrow.PrimitiveTypes.Int32)}
	tests := []struct {
		name  string
		in    []byte
		types []arrow.DataType
	}{
		{"empty", nil, i32},
		{"schema id out of range", []byte{0x80, 0x80, 0x80, 0x80, 0x10, 1, 0, 1, 0, 0, 0}, i32},
		{"bad varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, i32},
		{"more columns than types", []byte{0, 2, 0, 1, 0, 0, 0, 1, 0, 0, 0}, i32},
		{"bitmap padding", []byte{0, 1, 0x02, 1, 0, 0, 0}, i32},
		{"bool byte", []byte{0, 1, 0, 2}, []arrow.DataType{arrow.FixedWidthTypes.Boolean}},
		{"string longer than the row", []byte{0, 1, 0, 5, 'a'}, []arrow.DataType{arrow.BinaryTypes.String}},
		{"huge list count", []byte{0, 1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0}, list},
		{"unsupported type", []byte{0, 1, 0}, []arrow.DataType{arrow.PrimitiveTypes.Uint32}},
	}
	for _, tt := range tests {
		if _, _, err := Decode(tt.in, tt.types); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", tt.name, err)
		}
	}
}

// TestDecodeAddedColumns reads a row written before columns were added.
func TestDecodeAddedColumns(t *testing.T) {
	types := protocolTypes(t)
	old := Encode(nil, 0, types[:5], protocolRows[0][:5])
	sid, r, err := Decode(old, types)
	if err != nil || sid != 0 {
		t.Fatalf("Decode = schema %d, %v", sid, err)
	}
	want := append(protocolRows[0][:5:5], make(Row, len(types)-5)...)
	if !equalRows(types, r, want) {
		t.Fatalf("got %v\nwant %v", r, want)
	}
}

// TestEncodeKeepsFloatBits checks that stored values keep -0 and NaN payloads,
// which keys normalize.
func TestEncodeKeepsFloatBits(t *testing.T) {
	types := []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32}
	nan := math.Float64frombits(0xfff8000000000123)
	_, r, err := Decode(Encode(nil, 0, types, Row{negZero, float32(math.NaN())}), types)
	if err != nil || math.Float64bits(r[0].(float64)) != math.Float64bits(negZero) {
		t.Fatalf("-0 decoded as %v, %v", r, err)
	}
	_, r, _ = Decode(Encode(nil, 0, types[:1], Row{nan}), types[:1])
	if math.Float64bits(r[0].(float64)) != math.Float64bits(nan) {
		t.Fatalf("NaN decoded as %x", math.Float64bits(r[0].(float64)))
	}
}

func FuzzDecode(f *testing.F) {
	types := protocolTypes(f)
	for _, r := range protocolRows {
		f.Add(Encode(nil, 7, types, r))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		sid, r, err := Decode(in, types)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		sid2, r2, err := Decode(Encode(nil, sid, types, r), types)
		if err != nil || sid2 != sid || !equalRows(types, r, r2) {
			t.Fatalf("re-encoding changed the row: %v\n%v, %v", r, r2, err)
		}
	})
}

func BenchmarkEncodeDecode(b *testing.B) {
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.Binary}
	r := Row{int64(1234567890), "a customer name", 42.5, []byte("0123456789abcdef")}
	buf := Encode(nil, 1, types, r)
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf = Encode(buf[:0], 1, types, r)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := Decode(buf, types); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-to", func(b *testing.B) {
		// Into builders, as a snapshot read does: batches of 16K rows.
		fields := make([]arrow.Field, len(types))
		for i, t := range types {
			fields[i] = arrow.Field{Name: fmt.Sprint(i), Type: t, Nullable: true}
		}
		rb := array.NewRecordBuilder(memtest.Allocator(b), arrow.NewSchema(fields, nil))
		defer rb.Release()
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			if err := DecodeTo(buf, types, rb.Fields()); err != nil {
				b.Fatal(err)
			}
			if n++; n == 16<<10 {
				rb.NewRecordBatch().Release()
				n = 0
			}
		}
	})
}
