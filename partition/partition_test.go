package partition

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// TestValueString checks the conversion of each partition key type against
// what Fluss's PartitionUtils.convertValueOfType gives for the same value.
func TestValueString(t *testing.T) {
	mem := memtest.Allocator(t)
	one := func(dt arrow.DataType, set func(array.Builder)) arrow.Array {
		b := array.NewBuilder(mem, dt)
		defer b.Release()
		set(b)
		a := b.NewArray()
		t.Cleanup(a.Release)
		return a
	}
	ts := func(unit arrow.TimeUnit, v int64) arrow.Array {
		return one(&arrow.TimestampType{Unit: unit}, func(b array.Builder) { b.(*array.TimestampBuilder).Append(arrow.Timestamp(v)) })
	}
	tests := []struct {
		name string
		arr  arrow.Array
		want string
	}{
		{"string", one(arrow.BinaryTypes.String, func(b array.Builder) { b.(*array.StringBuilder).Append("eu-west") }), "eu-west"},
		{"boolean", one(arrow.FixedWidthTypes.Boolean, func(b array.Builder) { b.(*array.BooleanBuilder).Append(true) }), "true"},
		{"bytes", one(arrow.BinaryTypes.Binary, func(b array.Builder) { b.(*array.BinaryBuilder).Append([]byte{0x0a, 0xff}) }), "0aff"},
		{"tinyint", one(arrow.PrimitiveTypes.Int8, func(b array.Builder) { b.(*array.Int8Builder).Append(-3) }), "-3"},
		{"int", one(arrow.PrimitiveTypes.Int32, func(b array.Builder) { b.(*array.Int32Builder).Append(42) }), "42"},
		{"bigint", one(arrow.PrimitiveTypes.Int64, func(b array.Builder) { b.(*array.Int64Builder).Append(1 << 40) }), "1099511627776"},
		{"float", one(arrow.PrimitiveTypes.Float32, func(b array.Builder) { b.(*array.Float32Builder).Append(1.5) }), "1_5"},
		{"float whole", one(arrow.PrimitiveTypes.Float32, func(b array.Builder) { b.(*array.Float32Builder).Append(100) }), "100_0"},
		{"double large", one(arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(1.0e7) }), "1_0E7"},
		{"double small", one(arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(-2.5e-4) }), "-2_5E-4"},
		{"double nan", one(arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(math.NaN()) }), "NaN"},
		{"double -inf", one(arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(math.Inf(-1)) }), "-Inf"},
		{"date", one(arrow.FixedWidthTypes.Date32, func(b array.Builder) { b.(*array.Date32Builder).Append(20423) }), "2025-12-01"},
		{"time", one(arrow.FixedWidthTypes.Time32ms, func(b array.Builder) { b.(*array.Time32Builder).Append(arrow.Time32(3_723_004)) }), "01-02-03_004"},
		{"timestamp ms", ts(arrow.Millisecond, 1_764_547_200_123), "2025-12-01-00-00-00_123"},
		{"timestamp whole", ts(arrow.Microsecond, 1_764_547_200_000_000), "2025-12-01-00-00-00_"},
		{"timestamp ns", ts(arrow.Nanosecond, 1_764_547_200_000_001_500), "2025-12-01-00-00-00_0000015"},
	}
	for _, tt := range tests {
		got, err := ValueString("c", tt.arr, 0)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %q (%v), want %q", tt.name, got, err, tt.want)
		}
	}
	null := one(arrow.BinaryTypes.String, func(b array.Builder) { b.AppendNull() })
	if _, err := ValueString("dt", null, 0); errs.KindOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), `"dt"`) {
		t.Errorf("NULL: %v, want INVALID_ARGUMENT naming the column", err)
	}
}

func TestNames(t *testing.T) {
	keys := []string{"dt", "region"}
	values, err := Resolve("d.t", keys, map[string]string{"region": "eu", "dt": "20261201"}, true)
	if err != nil || Name(values) != "20261201$eu" || Qualified(keys, values) != "dt=20261201/region=eu" {
		t.Fatalf("%v %v", values, err)
	}
	back, err := Values(keys, "20261201$eu")
	if err != nil || back[0] != "20261201" || back[1] != "eu" {
		t.Errorf("values %v %v", back, err)
	}
	if _, err := Values(keys, "20261201"); errs.KindOf(err) != errs.InvalidArgument {
		t.Errorf("short name: %v", err)
	}
	invalid := map[string]struct {
		spec map[string]string
		want string
	}{
		"size":     {map[string]string{"dt": "1"}, "PartitionSpec size is not equal to partition keys size for partitioned table d.t."},
		"key":      {map[string]string{"dt": "1", "zone": "eu"}, "PartitionSpec PartitionSpec{dt=1, zone=eu} does not contain partition key 'region' for partitioned table d.t."},
		"empty":    {map[string]string{"dt": "", "region": "eu"}, "The partition value  is invalid: the empty string is not allowed"},
		"chars":    {map[string]string{"dt": "a/b", "region": "eu"}, "The partition value a/b is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, '_' and '-'"},
		"long":     {map[string]string{"dt": strings.Repeat("x", 201), "region": "eu"}, "is longer than the max allowed length 200"},
		"reserved": {map[string]string{"dt": "__h", "region": "eu"}, "'__' is not allowed as prefix"},
	}
	for name, tt := range invalid {
		if _, err := Resolve("d.t", keys, tt.spec, true); errs.KindOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", name, err, tt.want)
		}
	}
	if _, err := Resolve("d.t", keys, map[string]string{"dt": "__h", "region": "eu"}, false); err != nil {
		t.Errorf("the reserved prefix names an existing partition: %v", err)
	}
	if !Matches(keys, values, map[string]string{"region": "eu"}) || Matches(keys, values, map[string]string{"region": "us"}) {
		t.Error("Matches")
	}
}
