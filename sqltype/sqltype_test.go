package sqltype

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestParse(t *testing.T) {
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
		{"DECIMAL(38)", dec(38, 0), "DECIMAL(38,0)"},
		{"NUMERIC(12,4)", dec(12, 4), "DECIMAL(12,4)"},
		{"dec(3,1)", dec(3, 1), "DECIMAL(3,1)"},
		{"STRING", arrow.BinaryTypes.String, "STRING"},
		{"varchar(20)", arrow.BinaryTypes.String, "VARCHAR(20)"},
		{"VARCHAR", arrow.BinaryTypes.String, "VARCHAR(1)"},
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
		{"time(3) without time zone", arrow.FixedWidthTypes.Time32ms, "TIME(3)"},
		{"TIMESTAMP", tsUs, "TIMESTAMP(6)"},
		{"timestamp(0)", tsMs, "TIMESTAMP(0)"},
		{"TIMESTAMP(3)", tsMs, "TIMESTAMP(3)"},
		{"TIMESTAMP(4)", tsUs, "TIMESTAMP(4)"},
		{"TIMESTAMP(9)", tsNs, "TIMESTAMP(9)"},
		{"TIMESTAMP(3) WITHOUT TIME ZONE", tsMs, "TIMESTAMP(3)"},
		{"timestamp(6) without time zone", tsUs, "TIMESTAMP(6)"},
		{"TIMESTAMP_LTZ", ltz(arrow.Microsecond), "TIMESTAMP_LTZ(6)"},
		{"timestamp_ltz(3)", ltz(arrow.Millisecond), "TIMESTAMP_LTZ(3)"},
		{"TIMESTAMP_LTZ(9)", ltz(arrow.Nanosecond), "TIMESTAMP_LTZ(9)"},
		{"TIMESTAMP(3) WITH LOCAL TIME ZONE", ltz(arrow.Millisecond), "TIMESTAMP_LTZ(3)"},
		{"ARRAY<INT>", arrow.ListOf(arrow.PrimitiveTypes.Int32), "ARRAY<INT>"},
		{"ARRAY<INT NULL>", arrow.ListOf(arrow.PrimitiveTypes.Int32), "ARRAY<INT>"},
		{" array < string not null > ", arrow.ListOfNonNullable(arrow.BinaryTypes.String), "ARRAY<STRING NOT NULL>"},
		{"MAP<STRING, BIGINT>", arrow.MapOfFields(arrow.Field{Type: arrow.BinaryTypes.String},
			arrow.Field{Type: arrow.PrimitiveTypes.Int64, Nullable: true}), "MAP<STRING, BIGINT>"},
		{"MAP<STRING NOT NULL, DOUBLE>", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64), "MAP<STRING, DOUBLE>"},
		{"ROW<a INT, b ARRAY<DOUBLE> NOT NULL>", arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)}),
			"ROW<a INT, b ARRAY<DOUBLE> NOT NULL>"},
		{"row(x timestamp(3))", arrow.StructOf(arrow.Field{Name: "x", Type: tsMs, Nullable: true}), "ROW<x TIMESTAMP(3)>"},
		{"ROW(x ARRAY<ROW<y DATE>>)", arrow.StructOf(arrow.Field{Name: "x", Nullable: true,
			Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "y", Type: arrow.FixedWidthTypes.Date32, Nullable: true}))}),
			"ROW<x ARRAY<ROW<y DATE>>>"},
		{"MAP<INT,ROW<v MAP<STRING,STRING>>>", arrow.MapOfFields(arrow.Field{Type: arrow.PrimitiveTypes.Int32},
			arrow.Field{Nullable: true, Type: arrow.StructOf(arrow.Field{Name: "v", Nullable: true,
				Type: arrow.MapOfFields(arrow.Field{Type: arrow.BinaryTypes.String},
					arrow.Field{Type: arrow.BinaryTypes.String, Nullable: true})})}),
			"MAP<INT, ROW<v MAP<STRING, STRING>>>"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if !arrow.TypeEqual(got.Arrow(), tt.want, arrow.CheckMetadata()) {
			t.Errorf("Parse(%q).Arrow() = %s, want %s", tt.in, got.Arrow(), tt.want)
		}
		if c := got.String(); c != tt.canonical {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, c, tt.canonical)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"", "   ", "INTT", "VARCHAR2", "VARCHAR(0)", "CHAR(0)", "DECIMAL(0,0)", "DECIMAL(39,0)", "DECIMAL(5,6)",
		"DECIMAL(10,", "TIME(10)", "TIME(-1)", "TIMESTAMP(10)", "TIMESTAMP(+3)", "TIMESTAMP_LTZ(-1)",
		"TIMESTAMP WITH TIME ZONE", "TIMESTAMP_LTZ WITH LOCAL TIME ZONE", "ARRAY", "ARRAY<>", "ARRAY<INT",
		"MAP<INT>", "ROW<>", "ROW<a>", "ROW<a INT, a INT>", "ROW<a INT)", "INT NOT NULL", "INT INT", "BIGINT)",
		"INT(3)", "VARCHAR(99999999999999999999)", "STRING$", "DOUBLE PRECISION",
		strings.Repeat("ARRAY<", 40) + "INT" + strings.Repeat(">", 40),
	} {
		got, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) = %s, want an error", in, got)
			continue
		}
		// The message names the type and where it went wrong.
		if msg := err.Error(); !strings.HasPrefix(msg, "invalid type "+`"`) || !strings.Contains(msg, "at offset") {
			t.Errorf("Parse(%q): error %q does not name the type and the offset", in, msg)
		}
	}
}

func TestErrorMessages(t *testing.T) {
	for in, want := range map[string]string{
		"INTT":                     `invalid type "INTT": at offset 0: unknown type "INTT"; the types are ` + typeNames,
		"ARRAY<DUBLE>":             `invalid type "ARRAY<DUBLE>": at offset 6: unknown type "DUBLE"; the types are ` + typeNames,
		"MAP<,INT>":                `invalid type "MAP<,INT>": at offset 4: expected a type name, found ","; the types are ` + typeNames,
		"DECIMAL(5,6)":             `invalid type "DECIMAL(5,6)": at offset 10: DECIMAL scale must be an integer from 0 to 5, found "6"`,
		"ARRAY<INT":                `invalid type "ARRAY<INT": at offset 9: expected ">", found end of input`,
		"ROW<a INT, a INT>":        `invalid type "ROW<a INT, a INT>": at offset 12: duplicate ROW field "a"`,
		"TIMESTAMP WITH TIME ZONE": `invalid type "TIMESTAMP WITH TIME ZONE": at offset 15: expected "LOCAL", found "TIME"`,
	} {
		if _, err := Parse(in); err == nil || err.Error() != want {
			t.Errorf("Parse(%q) error = %v, want %s", in, err, want)
		}
	}
}

func TestClasses(t *testing.T) {
	tests := []struct {
		in, root                            string
		numeric, character, ordered, nested bool
	}{
		{"BOOLEAN", "BOOLEAN", false, false, false, false},
		{"integer", "INT", true, false, true, false},
		{"NUMERIC(5,2)", "DECIMAL", true, false, true, false},
		{"DOUBLE", "DOUBLE", true, false, true, false},
		{"STRING", "STRING", false, true, true, false},
		{"VARCHAR(10)", "VARCHAR", false, true, true, false},
		{"CHAR(2)", "CHAR", false, true, true, false},
		{"BYTES", "BYTES", false, false, false, false},
		{"VARBINARY(3)", "VARBINARY", false, false, false, false},
		{"DATE", "DATE", false, false, true, false},
		{"TIME(3)", "TIME", false, false, true, false},
		{"TIMESTAMP(3)", "TIMESTAMP", false, false, true, false},
		{"TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ", false, false, true, false},
		{"ARRAY<INT>", "ARRAY", false, false, false, true},
		{"MAP<INT, INT>", "MAP", false, false, false, true},
		{"ROW<a INT>", "ROW", false, false, false, true},
	}
	for _, tt := range tests {
		ty, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if ty.Root() != tt.root || ty.Numeric() != tt.numeric || ty.Character() != tt.character ||
			ty.Ordered() != tt.ordered || ty.Nested() != tt.nested {
			t.Errorf("%q: root %s numeric %v character %v ordered %v nested %v, want %s %v %v %v %v", tt.in,
				ty.Root(), ty.Numeric(), ty.Character(), ty.Ordered(), ty.Nested(),
				tt.root, tt.numeric, tt.character, tt.ordered, tt.nested)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"INT", "DECIMAL(10,2)", "MAP<STRING, ARRAY<ROW<a INT NOT NULL>>>",
		"TIMESTAMP(3) WITH LOCAL TIME ZONE", "ROW(a TIME(9), b VARBINARY(3))", "ARRAY<ARRAY<ARRAY<INT>>>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ty, err := Parse(s)
		if err != nil {
			return
		}
		// The canonical form must parse back to itself and the same Arrow type.
		c := ty.String()
		back, err := Parse(c)
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", c, s, err)
		}
		if back.String() != c || back.Root() != ty.Root() || !arrow.TypeEqual(ty.Arrow(), back.Arrow()) {
			t.Fatalf("%q: canonical %q is not stable (%q, %s vs %s)", s, c, back, ty.Arrow(), back.Arrow())
		}
	})
}
