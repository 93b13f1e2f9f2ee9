package catalog

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/fluxgate-io/fluxgate/errs"
)

func TestParseType(t *testing.T) {
	tsMs := &arrow.TimestampType{Unit: arrow.Millisecond}
	tsUs := &arrow.TimestampType{Unit: arrow.Microsecond}
	tsNs := &arrow.TimestampType{Unit: arrow.Nanosecond}
	ltz := func(u arrow.TimeUnit) arrow.DataType { return &arrow.TimestampType{Unit: u, TimeZone: "UTC"} }
	dec := func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	tests := []struct {
		in        string
		want      arrow.DataType
		canonical string
	}{
		{"BOOLEAN", arrow.FixedWidthTypes.Boolean, "BOOLEAN"},
		{"tinyint", arrow.PrimitiveTypes.Int8, "TINYINT"},
		{"SmallInt", arrow.PrimitiveTypes.Int16, "SMALLINT"},
		{"INT", arrow.PrimitiveTypes.Int32, "INT"},
		{"integer", arrow.PrimitiveTypes.Int32, "INT"},
		{"BIGINT", arrow.PrimitiveTypes.Int64, "BIGINT"},
		{"FLOAT", arrow.PrimitiveTypes.Float32, "FLOAT"},
		{"DOUBLE", arrow.PrimitiveTypes.Float64, "DOUBLE"},
		{"DECIMAL", dec(10, 0), "DECIMAL(10,0)"},
		{"decimal(10, 2)", dec(10, 2), "DECIMAL(10,2)"},
		{"DECIMAL(38,38)", dec(38, 38), "DECIMAL(38,38)"},
		{"DECIMAL(5)", dec(5, 0), "DECIMAL(5,0)"},
		{"NUMERIC(12,4)", dec(12, 4), "DECIMAL(12,4)"},
		{"STRING", arrow.BinaryTypes.String, "STRING"},
		{"varchar(20)", arrow.BinaryTypes.String, "VARCHAR(20)"},
		{"CHAR(3)", arrow.BinaryTypes.String, "CHAR(3)"},
		{"CHAR", arrow.BinaryTypes.String, "CHAR(1)"},
		{"BYTES", arrow.BinaryTypes.Binary, "BYTES"},
		{"VARBINARY(16)", arrow.BinaryTypes.Binary, "VARBINARY(16)"},
		{"binary(4)", arrow.BinaryTypes.Binary, "BINARY(4)"},
		{"DATE", arrow.FixedWidthTypes.Date32, "DATE"},
		{"TIME", arrow.FixedWidthTypes.Time32ms, "TIME(0)"},
		{"TIME(3)", arrow.FixedWidthTypes.Time32ms, "TIME(3)"},
		{"TIME(6)", arrow.FixedWidthTypes.Time64us, "TIME(6)"},
		{"TIME(9)", arrow.FixedWidthTypes.Time64ns, "TIME(9)"},
		{"TIMESTAMP", tsUs, "TIMESTAMP(6)"},
		{"timestamp(0)", tsMs, "TIMESTAMP(0)"},
		{"TIMESTAMP(3)", tsMs, "TIMESTAMP(3)"},
		{"TIMESTAMP(4)", tsUs, "TIMESTAMP(4)"},
		{"TIMESTAMP(9)", tsNs, "TIMESTAMP(9)"},
		{"TIMESTAMP(3) WITHOUT TIME ZONE", tsMs, "TIMESTAMP(3)"},
		{"TIMESTAMP_LTZ", ltz(arrow.Microsecond), "TIMESTAMP_LTZ(6)"},
		{"timestamp_ltz(3)", ltz(arrow.Millisecond), "TIMESTAMP_LTZ(3)"},
		{"TIMESTAMP_LTZ(9)", ltz(arrow.Nanosecond), "TIMESTAMP_LTZ(9)"},
		{"TIMESTAMP(3) WITH LOCAL TIME ZONE", ltz(arrow.Millisecond), "TIMESTAMP_LTZ(3)"},
		{"ARRAY<INT>", arrow.ListOf(arrow.PrimitiveTypes.Int32), "ARRAY<INT>"},
		{" array < string not null > ", arrow.ListOfNonNullable(arrow.BinaryTypes.String), "ARRAY<STRING NOT NULL>"},
		{"MAP<STRING, BIGINT>", arrow.MapOfFields(arrow.Field{Type: arrow.BinaryTypes.String},
			arrow.Field{Type: arrow.PrimitiveTypes.Int64, Nullable: true}), "MAP<STRING, BIGINT>"},
		{"ROW<a INT, b ARRAY<DOUBLE> NOT NULL>", arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)}),
			"ROW<a INT, b ARRAY<DOUBLE> NOT NULL>"},
		{"row(x timestamp(3))", arrow.StructOf(arrow.Field{Name: "x", Type: tsMs, Nullable: true}), "ROW<x TIMESTAMP(3)>"},
		{"MAP<INT,ROW<v MAP<STRING,STRING>>>", arrow.MapOfFields(arrow.Field{Type: arrow.PrimitiveTypes.Int32},
			arrow.Field{Nullable: true, Type: arrow.StructOf(arrow.Field{Name: "v", Nullable: true,
				Type: arrow.MapOfFields(arrow.Field{Type: arrow.BinaryTypes.String},
					arrow.Field{Type: arrow.BinaryTypes.String, Nullable: true})})}),
			"MAP<INT, ROW<v MAP<STRING, STRING>>>"},
	}
	for _, tt := range tests {
		got, err := ParseType(tt.in)
		if err != nil {
			t.Errorf("ParseType(%q): %v", tt.in, err)
			continue
		}
		if !arrow.TypeEqual(got, tt.want) {
			t.Errorf("ParseType(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if c, _ := CanonicalType(tt.in); c != tt.canonical {
			t.Errorf("CanonicalType(%q) = %q, want %q", tt.in, c, tt.canonical)
		}
	}
}

func TestParseTypeErrors(t *testing.T) {
	for _, in := range []string{
		"", "   ", "INTT", "VARCHAR(0)", "DECIMAL(0,0)", "DECIMAL(39,0)", "DECIMAL(5,6)", "DECIMAL(10,",
		"TIME(10)", "TIMESTAMP(10)", "TIMESTAMP_LTZ(-1)", "TIMESTAMP WITH TIME ZONE", "ARRAY", "ARRAY<>",
		"ARRAY<INT", "MAP<INT>", "ROW<>", "ROW<a>", "ROW<a INT, a INT>", "INT NOT NULL", "INT INT", "BIGINT)",
		"INT(3)", "VARCHAR(99999999999999999999)", "STRING$", "ROW<a INT)",
	} {
		_, err := ParseType(in)
		if errs.KindOf(err) != errs.Invalid {
			t.Errorf("ParseType(%q) = %v, want an invalid-argument error", in, err)
		}
	}
}

func FuzzParseType(f *testing.F) {
	for _, s := range []string{"INT", "DECIMAL(10,2)", "MAP<STRING, ARRAY<ROW<a INT NOT NULL>>>",
		"TIMESTAMP(3) WITH LOCAL TIME ZONE", "ROW(a TIME(9), b VARBINARY(3))", "ARRAY<ARRAY<ARRAY<INT>>>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dt, err := ParseType(s)
		if err != nil {
			return
		}
		// The canonical form must parse back to itself and the same Arrow type.
		c, _ := CanonicalType(s)
		dt2, err := ParseType(c)
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", c, s, err)
		}
		if c2, _ := CanonicalType(c); c2 != c || !arrow.TypeEqual(dt, dt2) {
			t.Fatalf("%q: canonical %q is not stable (%q, %s vs %s)", s, c, c2, dt, dt2)
		}
	})
}
