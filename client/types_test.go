package client

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestArrowType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want arrow.DataType
	}{
		{"BOOLEAN", arrow.FixedWidthTypes.Boolean},
		{"tinyint", arrow.PrimitiveTypes.Int8},
		{"SMALLINT", arrow.PrimitiveTypes.Int16},
		{"INT", arrow.PrimitiveTypes.Int32},
		{"integer", arrow.PrimitiveTypes.Int32},
		{"BIGINT", arrow.PrimitiveTypes.Int64},
		{"FLOAT", arrow.PrimitiveTypes.Float32},
		{"DOUBLE", arrow.PrimitiveTypes.Float64},
		{"DECIMAL(10,2)", &arrow.Decimal128Type{Precision: 10, Scale: 2}},
		{"decimal", &arrow.Decimal128Type{Precision: 10, Scale: 0}},
		{"DECIMAL(38)", &arrow.Decimal128Type{Precision: 38, Scale: 0}},
		{"STRING", arrow.BinaryTypes.String},
		{"VARCHAR(20)", arrow.BinaryTypes.String},
		{"CHAR(1)", arrow.BinaryTypes.String},
		{"BYTES", arrow.BinaryTypes.Binary},
		{"VARBINARY(8)", arrow.BinaryTypes.Binary},
		{"BINARY(16)", arrow.BinaryTypes.Binary},
		{"DATE", arrow.FixedWidthTypes.Date32},
		{"TIME", arrow.FixedWidthTypes.Time32ms},
		{"TIME(3)", arrow.FixedWidthTypes.Time32ms},
		{"TIME(6)", arrow.FixedWidthTypes.Time64us},
		{"TIME(9)", arrow.FixedWidthTypes.Time64ns},
		{"TIMESTAMP", &arrow.TimestampType{Unit: arrow.Microsecond}},
		{"TIMESTAMP(0)", &arrow.TimestampType{Unit: arrow.Millisecond}},
		{"TIMESTAMP(3)", &arrow.TimestampType{Unit: arrow.Millisecond}},
		{"timestamp(6) without time zone", &arrow.TimestampType{Unit: arrow.Microsecond}},
		{"TIMESTAMP(9)", &arrow.TimestampType{Unit: arrow.Nanosecond}},
		{"TIMESTAMP_LTZ", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{"TIMESTAMP_LTZ(3)", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		{"TIMESTAMP(3) WITH LOCAL TIME ZONE", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		{"ARRAY<INT>", arrow.ListOf(arrow.PrimitiveTypes.Int32)},
		{"ARRAY<BIGINT NOT NULL>", arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int64)},
		{"MAP<STRING, DOUBLE>", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64)},
		{"ROW<a INT, b STRING NOT NULL>", arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.String})},
		{"ROW(x ARRAY<ROW<y DATE>>)", arrow.StructOf(arrow.Field{Name: "x", Nullable: true,
			Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "y", Type: arrow.FixedWidthTypes.Date32, Nullable: true}))})},
	} {
		got, err := ArrowType(tc.in)
		if err != nil {
			t.Errorf("ArrowType(%q): %v", tc.in, err)
			continue
		}
		if !arrow.TypeEqual(got, tc.want, arrow.CheckMetadata()) {
			t.Errorf("ArrowType(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{"", "VARCHAR2", "DECIMAL(39,0)", "DECIMAL(5,6)", "TIMESTAMP(10)", "ARRAY<INT",
		"INT INT", "MAP<INT>", "ROW<a INT, a INT>", "TIME(-1)", "CHAR(0)"} {
		if dt, err := ArrowType(bad); err == nil {
			t.Errorf("ArrowType(%q) = %s, want an error", bad, dt)
		}
	}
}

func TestTableSchema(t *testing.T) {
	spec := TableSpec{
		Table: "t",
		Columns: []Column{
			{Name: "id", Type: "BIGINT"},
			{Name: "name", Type: "STRING", NotNull: true},
			{Name: "ts", Type: "TIMESTAMP_LTZ(3)"},
		},
		PrimaryKey: []string{"id"},
	}
	sc, err := spec.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	want := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
	}, nil)
	if !sc.Equal(want) {
		t.Errorf("schema = %s, want %s", sc, want)
	}
	spec.Columns[0].Type = "NOPE"
	if _, err := spec.ArrowSchema(); err == nil {
		t.Error("bad type accepted")
	}
}
