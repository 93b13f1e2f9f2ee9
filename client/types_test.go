package client

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// The parser itself is tested in package sqltype; this tests the client's
// entry point.
func TestArrowType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want arrow.DataType
	}{
		{"integer", arrow.PrimitiveTypes.Int32},
		{"VARCHAR(20)", arrow.BinaryTypes.String},
		{"TIMESTAMP(3) WITH LOCAL TIME ZONE", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		{"MAP<STRING, DOUBLE>", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64)},
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
	for _, bad := range []string{"", "VARCHAR2", "DECIMAL(39,0)", "ARRAY<INT"} {
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
			{Name: "name", Type: "STRING", Nullable: new(false)},
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
