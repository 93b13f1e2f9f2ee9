package row

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/sqltype"
)

type num = json.Number

// coerceType is the Arrow type of a test case: a Flink SQL type, or an Arrow
// type written as "arrow:" and a key of coerceArrowTypes.
func coerceType(t *testing.T, typ string) arrow.DataType {
	t.Helper()
	if name, ok := strings.CutPrefix(typ, "arrow:"); ok {
		dt, ok := coerceArrowTypes[name]
		if !ok {
			t.Fatalf("no arrow type %q", name)
		}
		return dt
	}
	st, err := sqltype.Parse(typ)
	if err != nil {
		t.Fatal(err)
	}
	return st.Arrow()
}

var coerceArrowTypes = map[string]arrow.DataType{
	"large_utf8":   arrow.BinaryTypes.LargeString,
	"string_view":  arrow.BinaryTypes.StringView,
	"large_binary": arrow.BinaryTypes.LargeBinary,
	"fsb3":         &arrow.FixedSizeBinaryType{ByteWidth: 3},
	"time32s":      arrow.FixedWidthTypes.Time32s,
	"ts_s":         &arrow.TimestampType{Unit: arrow.Second},
	"ts_s_utc":     &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"},
	"uint8":        arrow.PrimitiveTypes.Uint8,
	"date64":       arrow.FixedWidthTypes.Date64,
}

func dec(t *testing.T, unscaled string) decimal128.Num {
	t.Helper()
	n, ok := new(big.Int).SetString(unscaled, 10)
	if !ok {
		t.Fatalf("bad unscaled %q", unscaled)
	}
	return decimal128.FromBigInt(n)
}

// at is the instant y-mo-d h:mi:s.ns UTC in unit u.
func at(y int, mo time.Month, d, h, mi, s, ns int, u arrow.TimeUnit) arrow.Timestamp {
	t := time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	switch u {
	case arrow.Second:
		return arrow.Timestamp(t.Unix())
	case arrow.Millisecond:
		return arrow.Timestamp(t.UnixMilli())
	case arrow.Microsecond:
		return arrow.Timestamp(t.UnixMicro())
	}
	return arrow.Timestamp(t.UnixNano())
}

func TestCoerce(t *testing.T) {
	const (
		s  = arrow.Second
		ms = arrow.Millisecond
		us = arrow.Microsecond
		ns = arrow.Nanosecond
	)
	tests := []struct {
		typ  string
		in   any
		want any
	}{
		// NULL, for every kind of type.
		{"INT", nil, nil},
		{"STRING", nil, nil},
		{"ARRAY<INT>", nil, nil},

		{"BOOLEAN", true, true},
		{"BOOLEAN", false, false},

		{"TINYINT", num("-128"), int8(-128)},
		{"TINYINT", num("127"), int8(127)},
		{"TINYINT", num("0"), int8(0)},
		{"TINYINT", num("-0"), int8(0)},
		{"TINYINT", num("3.0"), int8(3)},
		{"TINYINT", num("1.2e1"), int8(12)},
		{"TINYINT", num("1200e-2"), int8(12)},
		{"TINYINT", float64(-7), int8(-7)},
		{"TINYINT", int(5), int8(5)},
		{"TINYINT", uint64(127), int8(127)},
		{"SMALLINT", num("-32768"), int16(-32768)},
		{"SMALLINT", num("32767"), int16(32767)},
		{"INT", num("-2147483648"), int32(math.MinInt32)},
		{"INT", num("2147483647"), int32(math.MaxInt32)},
		{"INT", int64(-1), int32(-1)},
		{"BIGINT", num("-9223372036854775808"), int64(math.MinInt64)},
		{"BIGINT", num("9223372036854775807"), int64(math.MaxInt64)},
		{"BIGINT", num("9007199254740993"), int64(9007199254740993)}, // beyond float64's exact integers
		{"BIGINT", num("1e18"), int64(1e18)},
		{"BIGINT", num("0.0000e999999999999"), int64(0)},
		{"BIGINT", uint32(math.MaxUint32), int64(math.MaxUint32)},
		{"BIGINT", float64(1 << 62), int64(1 << 62)},
		{"BIGINT", float64(-1 << 63), int64(math.MinInt64)},
		{"BIGINT", float32(1 << 40), int64(1 << 40)},
		{"BIGINT", float64(1e18), int64(1e18)},

		{"FLOAT", num("1.5"), float32(1.5)},
		{"FLOAT", num("0.1"), float32(0.1)},
		{"FLOAT", num("-3"), float32(-3)},
		{"FLOAT", num("3.4028234663852886e38"), float32(math.MaxFloat32)},
		{"FLOAT", num("1e-50"), float32(0)}, // underflow rounds like any float
		{"FLOAT", float64(0.25), float32(0.25)},
		{"FLOAT", int(7), float32(7)},
		{"DOUBLE", num("0.1"), 0.1},
		{"DOUBLE", num("-1.7976931348623157e308"), -math.MaxFloat64},
		{"DOUBLE", num("5e-324"), 5e-324},
		{"DOUBLE", num("9007199254740993"), 9007199254740992.0}, // rounds to nearest
		{"DOUBLE", 2.5, 2.5},
		{"DOUBLE", int64(-42), -42.0},
		{"DOUBLE", math.Inf(1), math.Inf(1)}, // a Go float64 passes as it is
		{"DOUBLE", "Infinity", math.Inf(1)},
		{"DOUBLE", "-Infinity", math.Inf(-1)},
		{"FLOAT", "-Infinity", float32(math.Inf(-1))},

		{"DECIMAL(10,2)", "100.00", dec(t, "10000")},
		{"DECIMAL(10,2)", "100", dec(t, "10000")},
		{"DECIMAL(10,2)", "-0.01", dec(t, "-1")},
		{"DECIMAL(10,2)", "1.230", dec(t, "123")}, // trailing zeros are exact
		{"DECIMAL(10,2)", "+1.5", dec(t, "150")},
		{"DECIMAL(10,2)", ".5", dec(t, "50")},
		{"DECIMAL(10,2)", "5.", dec(t, "500")},
		{"DECIMAL(10,2)", "-0", dec(t, "0")},
		{"DECIMAL(10,2)", "00012.5", dec(t, "1250")},
		{"DECIMAL(10,2)", "99999999.99", dec(t, "9999999999")},
		{"DECIMAL(10,2)", "-99999999.99", dec(t, "-9999999999")},
		{"DECIMAL(10,2)", "1.5e3", dec(t, "150000")},
		{"DECIMAL(10,2)", "125e-2", dec(t, "125")},
		{"DECIMAL(10,2)", num("12.34"), dec(t, "1234")},
		{"DECIMAL(10,2)", 0.1, dec(t, "10")}, // float64's shortest form, "0.1"
		{"DECIMAL(10,2)", int(-3), dec(t, "-300")},
		{"DECIMAL(10,0)", "1234567890", dec(t, "1234567890")},
		{"DECIMAL(38,10)", "9999999999999999999999999999.9999999999", dec(t, "99999999999999999999999999999999999999")},
		{"DECIMAL(38,10)", "-9999999999999999999999999999.9999999999", dec(t, "-99999999999999999999999999999999999999")},
		{"DECIMAL(38,0)", "12345678901234567890123456789012345678", dec(t, "12345678901234567890123456789012345678")},
		{"DECIMAL(38,38)", "0.12345678901234567890123456789012345678", dec(t, "12345678901234567890123456789012345678")},
		{"DECIMAL(3,3)", "-0.999", dec(t, "-999")},

		{"STRING", "héllo", "héllo"},
		{"STRING", "", ""},
		{"VARCHAR(3)", "abc", "abc"},
		{"CHAR(2)", "ab", "ab"},
		{"arrow:large_utf8", "x", "x"},
		{"arrow:string_view", "y", "y"},

		{"BYTES", "h\u00e9", []byte("h\xc3\xa9")}, // the string's UTF-8 bytes
		{"BYTES", "", []byte{}},
		{"BINARY(3)", "abc", []byte("abc")},
		{"VARBINARY(8)", []byte{0, 255}, []byte{0, 255}},
		{"arrow:large_binary", "z", []byte("z")},
		{"arrow:fsb3", "abc", []byte("abc")},

		{"DATE", "2026-11-30", arrow.Date32(20787)},
		{"DATE", "1970-01-01", arrow.Date32(0)},
		{"DATE", "1969-12-31", arrow.Date32(-1)},
		{"DATE", "2024-02-29", arrow.Date32(19782)},
		{"DATE", "0001-01-01", arrow.Date32(-719162)},
		{"DATE", "9999-12-31", arrow.Date32(2932896)},

		{"TIME", "00:00:00", arrow.Time32(0)},
		{"TIME", "12:34:56", arrow.Time32(45296000)},
		{"TIME", "23:59:59", arrow.Time32(86399000)},
		{"TIME", "12:34:56.000", arrow.Time32(45296000)},
		{"TIME", "12:34:56.000000000000", arrow.Time32(45296000)},
		{"TIME", "12:34:56.7", arrow.Time32(45296700)}, // TIME(0) is held in ms: Coerce sees only the Arrow type
		{"TIME(3)", "12:34:56.7", arrow.Time32(45296700)},
		{"TIME(3)", "23:59:59.999", arrow.Time32(86399999)},
		{"TIME(3)", "23:59:59.999000", arrow.Time32(86399999)},
		{"TIME(6)", "12:34:56.123456", arrow.Time64(45296123456)},
		{"TIME(6)", "00:00:00.000001", arrow.Time64(1)},
		{"TIME(9)", "23:59:59.999999999", arrow.Time64(86399999999999)},
		{"TIME(9)", "00:00:00.1", arrow.Time64(100000000)},
		{"arrow:time32s", "01:00:00", arrow.Time32(3600)},
		{"arrow:time32s", "01:00:00.000", arrow.Time32(3600)},

		// TIMESTAMP(3): strings and epoch milliseconds.
		{"TIMESTAMP(3)", "2026-11-30T12:00:00.123", at(2026, 11, 30, 12, 0, 0, 123e6, ms)},
		{"TIMESTAMP(3)", "2026-11-30 12:00:00.123", at(2026, 11, 30, 12, 0, 0, 123e6, ms)},
		{"TIMESTAMP(3)", "2026-11-30T12:00:00", at(2026, 11, 30, 12, 0, 0, 0, ms)},
		{"TIMESTAMP(3)", "2026-11-30T12:00:00.1", at(2026, 11, 30, 12, 0, 0, 100e6, ms)},
		{"TIMESTAMP(3)", "2026-11-30T12:00:00.123000000", at(2026, 11, 30, 12, 0, 0, 123e6, ms)},
		{"TIMESTAMP(3)", "1969-12-31T23:59:59.999", arrow.Timestamp(-1)},
		{"TIMESTAMP(3)", "1900-01-01T00:00:00", at(1900, 1, 1, 0, 0, 0, 0, ms)},
		{"TIMESTAMP(3)", "0001-01-01T00:00:00", at(1, 1, 1, 0, 0, 0, 0, ms)},
		{"TIMESTAMP(3)", "9999-12-31T23:59:59.999", at(9999, 12, 31, 23, 59, 59, 999e6, ms)},
		{"TIMESTAMP(3)", num("1764504000123"), arrow.Timestamp(1764504000123)},
		{"TIMESTAMP(3)", num("0"), arrow.Timestamp(0)},
		{"TIMESTAMP(3)", num("-1"), arrow.Timestamp(-1)},
		{"TIMESTAMP(3)", num("-86400000"), arrow.Timestamp(-86400000)},
		{"TIMESTAMP(3)", int64(1764504000123), arrow.Timestamp(1764504000123)},
		{"TIMESTAMP(3)", float64(1764504000123), arrow.Timestamp(1764504000123)},
		// TIMESTAMP(6) and (9): the same converted exactly.
		{"TIMESTAMP", "2026-11-30T12:00:00.123456", at(2026, 11, 30, 12, 0, 0, 123456e3, us)},
		{"TIMESTAMP(6)", "2026-11-30T12:00:00.5", at(2026, 11, 30, 12, 0, 0, 500e6, us)},
		{"TIMESTAMP(6)", "1969-12-31T23:59:59.999999", arrow.Timestamp(-1)},
		{"TIMESTAMP(6)", "0001-01-01T00:00:00", at(1, 1, 1, 0, 0, 0, 0, us)},
		{"TIMESTAMP(6)", num("1764504000123"), arrow.Timestamp(1764504000123000)},
		{"TIMESTAMP(6)", num("-1"), arrow.Timestamp(-1000)},
		{"TIMESTAMP(9)", "2026-11-30T12:00:00.123456789", at(2026, 11, 30, 12, 0, 0, 123456789, ns)},
		{"TIMESTAMP(9)", "1969-12-31T23:59:59.999999999", arrow.Timestamp(-1)},
		{"TIMESTAMP(9)", "1677-09-21T00:12:43.145224192", arrow.Timestamp(math.MinInt64)},
		{"TIMESTAMP(9)", "2262-04-11T23:47:16.854775807", arrow.Timestamp(math.MaxInt64)},
		{"TIMESTAMP(9)", num("1764504000123"), arrow.Timestamp(1764504000123000000)},
		{"TIMESTAMP(9)", num("-1"), arrow.Timestamp(-1000000)},
		{"TIMESTAMP(9)", num("9223372036854"), arrow.Timestamp(9223372036854000000)},
		{"TIMESTAMP(9)", num("-9223372036854"), arrow.Timestamp(-9223372036854000000)},
		{"arrow:ts_s", "2026-11-30T12:00:00", at(2026, 11, 30, 12, 0, 0, 0, s)},
		{"arrow:ts_s", "2026-11-30T12:00:00.000", at(2026, 11, 30, 12, 0, 0, 0, s)},
		{"arrow:ts_s", num("-2000"), arrow.Timestamp(-2)},

		// TIMESTAMP_LTZ: no zone means UTC; zones convert to UTC.
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00.123", at(2026, 11, 30, 12, 0, 0, 123e6, ms)},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00.123Z", at(2026, 11, 30, 12, 0, 0, 123e6, ms)},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00+00:00", at(2026, 11, 30, 12, 0, 0, 0, ms)},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00-00:00", at(2026, 11, 30, 12, 0, 0, 0, ms)},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00+02:00", at(2026, 11, 30, 10, 0, 0, 0, ms)},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00.5-05:30", at(2026, 11, 30, 17, 30, 0, 500e6, ms)},
		{"TIMESTAMP_LTZ(3)", "2026-12-31 23:30:00-01:00", at(2027, 1, 1, 0, 30, 0, 0, ms)},
		{"TIMESTAMP_LTZ(3)", "1970-01-01T00:59:59.999+01:00", arrow.Timestamp(-1)},
		{"TIMESTAMP_LTZ(3)", num("1764504000123"), arrow.Timestamp(1764504000123)},
		{"TIMESTAMP_LTZ(3)", num("-5"), arrow.Timestamp(-5)},
		{"TIMESTAMP_LTZ", "2026-11-30T12:00:00.123456+01:00", at(2026, 11, 30, 11, 0, 0, 123456e3, us)},
		{"TIMESTAMP_LTZ(9)", "2026-11-30T12:00:00.123456789Z", at(2026, 11, 30, 12, 0, 0, 123456789, ns)},
		{"TIMESTAMP_LTZ(9)", num("-1"), arrow.Timestamp(-1e6)},
		{"TIMESTAMP WITH LOCAL TIME ZONE", "2026-11-30T12:00:00+23:59", at(2026, 11, 29, 12, 1, 0, 0, us)},
		{"arrow:ts_s_utc", "2026-11-30T12:00:00Z", at(2026, 11, 30, 12, 0, 0, 0, s)},
	}
	for _, tc := range tests {
		dt := coerceType(t, tc.typ)
		got, err := Coerce(dt, tc.in)
		if err != nil {
			t.Errorf("Coerce(%s, %#v): %v", tc.typ, tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Coerce(%s, %#v) = %#v (%T), want %#v (%T)", tc.typ, tc.in, got, got, tc.want, tc.want)
		}
	}
}

func TestCoerceErrors(t *testing.T) {
	tests := []struct {
		typ string
		in  any
		msg string // a part of the error message
	}{
		{"BOOLEAN", "true", "expected true or false"},
		{"BOOLEAN", num("1"), "expected true or false"},

		{"TINYINT", num("128"), "out of range [-128, 127]"},
		{"TINYINT", num("-129"), "out of range"},
		{"TINYINT", num("300"), "out of range"},
		{"TINYINT", num("3.5"), "not an integer"},
		{"TINYINT", num("1e-1"), "not an integer"},
		{"TINYINT", float64(3.5), "not an integer"},
		{"TINYINT", int(200), "out of range"},
		{"TINYINT", "3", "expected an integer"},
		{"TINYINT", true, "expected an integer"},
		{"SMALLINT", num("32768"), "out of range [-32768, 32767]"},
		{"SMALLINT", num("-32769"), "out of range"},
		{"INT", num("2147483648"), "out of range"},
		{"INT", num("-2147483649"), "out of range"},
		{"INT", num("1e10"), "out of range"},
		{"BIGINT", num("9223372036854775808"), "out of range"},
		{"BIGINT", num("-9223372036854775809"), "out of range"},
		{"BIGINT", num("1e19"), "out of range"},
		{"BIGINT", num("1e999999999999"), "out of range"},
		{"BIGINT", num("1e-999999999999"), "not an integer"},
		{"BIGINT", uint64(math.MaxUint64), "out of range"},
		{"BIGINT", float64(1e19), "out of range"},
		{"BIGINT", float64(1 << 63), "out of range"},
		{"BIGINT", float64(1e300), "out of range"},
		{"BIGINT", float64(1e-300), "not an integer"},
		{"BIGINT", float32(0.5), "not an integer"},
		{"BIGINT", math.NaN(), "not a number"},
		{"BIGINT", math.Inf(-1), "not a number"},
		{"BIGINT", num("0x10"), "not a number"},
		{"BIGINT", num("1_000"), "not a number"},
		{"BIGINT", num(""), "not a number"},
		{"BIGINT", num("."), "not a number"},
		{"BIGINT", num("1e"), "not a number"},
		{"BIGINT", num("--1"), "not a number"},
		{"BIGINT", num(" 1"), "not a number"},
		{"BIGINT", []any{num("1")}, "an array"},
		{"BIGINT", map[string]any{}, "an object"},

		{"FLOAT", num("3.5e38"), "out of range for float32"},
		{"FLOAT", num("-1e39"), "out of range"},
		{"FLOAT", float64(1e39), "out of range for float32"},
		{"FLOAT", "1.5", "expected a number"},
		{"DOUBLE", num("1e309"), "out of range for float64"},
		{"DOUBLE", num("NaN"), "not a number"},
		{"DOUBLE", "nan", `expected a number, "NaN", "Infinity" or "-Infinity"`},
		{"FLOAT", "+Infinity", "expected a number"},
		{"DOUBLE", num("Inf"), "not a number"},
		{"DOUBLE", false, "expected a number"},

		{"DECIMAL(10,2)", "1.234", "more than 2 digits after the point"},
		{"DECIMAL(10,2)", "0.001", "more than 2 digits after the point"},
		{"DECIMAL(10,2)", "100000000", "more than 10 digits in all"},
		{"DECIMAL(10,2)", "100000000.00", "more than 10 digits"},
		{"DECIMAL(10,2)", "-100000000", "more than 10 digits"},
		{"DECIMAL(10,2)", "1e8", "more than 10 digits"},
		{"DECIMAL(10,2)", "1e999999999999", "more than 10 digits"},
		{"DECIMAL(10,2)", "1e-999999999999", "after the point"},
		{"DECIMAL(10,2)", num("1.005"), "after the point"},
		{"DECIMAL(10,2)", 0.125, "after the point"},
		{"DECIMAL(10,0)", "0.5", "more than 0 digits after the point"},
		{"DECIMAL(38,0)", "123456789012345678901234567890123456789", "more than 38 digits"},
		{"DECIMAL(10,2)", "abc", "not a decimal number"},
		{"DECIMAL(10,2)", "", "not a decimal number"},
		{"DECIMAL(10,2)", "1,5", "not a decimal number"},
		{"DECIMAL(10,2)", "1.5 ", "not a decimal number"},
		{"DECIMAL(10,2)", "NaN", "not a decimal number"},
		{"DECIMAL(10,2)", "Infinity", "not a decimal number"},
		{"DECIMAL(10,2)", "0x1p-2", "not a decimal number"},
		{"DECIMAL(10,2)", "1/2", "not a decimal number"},
		{"DECIMAL(10,2)", math.Inf(1), "not a decimal number"},
		{"DECIMAL(10,2)", true, "expected a decimal string or a number"},

		{"STRING", num("1"), "expected a string"},
		{"STRING", true, "expected a string"},
		{"STRING", []byte("x"), "expected a string"},
		{"arrow:string_view", 1.5, "expected a string"},
		{"BYTES", num("1"), "expected a string"},
		{"arrow:fsb3", "ab", "2 bytes, not 3"},
		{"arrow:fsb3", "abcd", "4 bytes, not 3"},

		{"DATE", "2026-02-29", "expected a valid date"},
		{"DATE", "2026-13-01", "expected a valid date"},
		{"DATE", "2026-00-10", "expected a valid date"},
		{"DATE", "2026-04-31", "expected a valid date"},
		{"DATE", "2026-04-00", "expected a valid date"},
		{"DATE", "2026-4-1", "expected a valid date"},
		{"DATE", "26-04-01", "expected a valid date"},
		{"DATE", "2026/04/01", "expected a valid date"},
		{"DATE", "2026-04-01T00:00:00", "expected a valid date"},
		{"DATE", "+2026-04-01", "expected a valid date"},
		{"DATE", num("20787"), "expected a date string"},

		{"TIME", "24:00:00", "expected a time"},
		{"TIME", "12:60:00", "expected a time"},
		{"TIME", "12:00:60", "expected a time"},
		{"TIME", "12:00", "expected a time"},
		{"TIME", "1:00:00", "expected a time"},
		{"TIME", "12:00:00.", "expected a time"},
		{"TIME", "12:00:00Z", "expected a time"},
		{"TIME", num("1000"), "expected a time"},
		{"TIME(3)", "12:00:00.1234", "finer than the unit (ms)"},
		{"TIME(6)", "12:00:00.0000001", "finer than the unit (us)"},
		{"TIME(9)", "12:00:00.0000000001", "finer than the unit (ns)"},
		{"arrow:time32s", "12:00:00.001", "finer than the unit (s)"},

		{"TIMESTAMP(3)", "2026-11-30T12:00:00.1234", "finer than the unit (ms)"},
		{"TIMESTAMP(6)", "2026-11-30T12:00:00.1234567", "finer than the unit (us)"},
		{"TIMESTAMP(9)", "2026-11-30T12:00:00.1234567891", "finer than the unit (ns)"},
		{"arrow:ts_s", "2026-11-30T12:00:00.5", "finer than the unit (s)"},
		{"arrow:ts_s", num("1500"), "finer than the unit (s)"},
		{"TIMESTAMP(3)", "2026-11-30T12:00:00Z", "takes no zone"},
		{"TIMESTAMP(3)", "2026-11-30T12:00:00+01:00", "takes no zone"},
		{"TIMESTAMP(3)", "2026-11-30T12:00:00 UTC", "expected a timestamp"},
		{"TIMESTAMP(3)", "2026-11-30", "expected a timestamp"},
		{"TIMESTAMP(3)", "2026-11-30T12:00", "expected a timestamp"},
		{"TIMESTAMP(3)", "2026-11-30t12:00:00", "expected a timestamp"},
		{"TIMESTAMP(3)", "2026-11-30  12:00:00", "expected a timestamp"},
		{"TIMESTAMP(3)", "2026-02-30T12:00:00", "expected a timestamp"},
		{"TIMESTAMP(3)", "2026-11-30T25:00:00", "expected a timestamp"},
		{"TIMESTAMP(3)", "", "expected a timestamp"},
		{"TIMESTAMP(3)", num("1.5"), "epoch milliseconds not an integer"},
		{"TIMESTAMP(3)", num("1e19"), "epoch milliseconds out of range"},
		{"TIMESTAMP(3)", true, "expected a timestamp string or epoch milliseconds"},
		{"TIMESTAMP(9)", "1677-09-21T00:12:43.145224191", "out of range for the unit (ns)"},
		{"TIMESTAMP(9)", "2262-04-11T23:47:16.854775808", "out of range for the unit (ns)"},
		{"TIMESTAMP(9)", "0001-01-01T00:00:00", "out of range for the unit (ns)"},
		{"TIMESTAMP(9)", num("9223372036855"), "out of range for the unit (ns)"},
		{"TIMESTAMP(9)", num("-9223372036855"), "out of range for the unit (ns)"},
		{"TIMESTAMP(6)", num("9223372036854776"), "out of range for the unit (us)"},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00+1:00", "expected a timestamp"},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00+0100", "expected a timestamp"},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00+24:00", "expected a timestamp"},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00+01:60", "expected a timestamp"},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00z", "expected a timestamp"},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00 Z", "expected a timestamp"},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00UTC", "expected a timestamp"},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00.Z", "expected a timestamp"},
		{"TIMESTAMP_LTZ(3)", "2026-11-30T12:00:00.1234Z", "finer than the unit (ms)"},
		{"TIMESTAMP_LTZ(9)", "2262-04-11T23:47:16.854775807-00:01", "out of range for the unit (ns)"},

		{"ARRAY<INT>", []any{num("1")}, "nested types take no literal"},
		{"ARRAY<INT>", num("1"), "nested types take no literal"},
		{"MAP<STRING, INT>", map[string]any{"a": num("1")}, "nested types take no literal"},
		{"ROW<a INT>", []any{num("1")}, "nested types take no literal"},
		{"arrow:uint8", num("1"), "takes no literal"},
		{"arrow:date64", "2026-11-30", "takes no literal"},
	}
	for _, tc := range tests {
		dt := coerceType(t, tc.typ)
		got, err := Coerce(dt, tc.in)
		if err == nil {
			t.Errorf("Coerce(%s, %#v) = %#v, want an error", tc.typ, tc.in, got)
			continue
		}
		if got != nil {
			t.Errorf("Coerce(%s, %#v) = %#v with error %v, want nil", tc.typ, tc.in, got, err)
		}
		if k := errs.KindOf(err); k != errs.InvalidArgument {
			t.Errorf("Coerce(%s, %#v): error kind %v, want invalid argument: %v", tc.typ, tc.in, k, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.msg) || !strings.Contains(msg, dt.String()) {
			t.Errorf("Coerce(%s, %#v): error %q, want one naming %s and saying %q", tc.typ, tc.in, msg, dt, tc.msg)
		}
	}
}

// TestCoerceErrorNamesValue checks that errors name the value as written.
func TestCoerceErrorNamesValue(t *testing.T) {
	tests := []struct {
		typ  arrow.DataType
		in   any
		want string
	}{
		{arrow.PrimitiveTypes.Int8, num("300"), "cannot coerce 300 to int8: out of range [-128, 127]"},
		{arrow.PrimitiveTypes.Int8, 3.5, "cannot coerce 3.5 to int8: not an integer"},
		{&arrow.Decimal128Type{Precision: 10, Scale: 2}, "1.234", `cannot coerce "1.234" to decimal(10, 2): more than 2 digits after the point`},
		{arrow.FixedWidthTypes.Boolean, "yes", `cannot coerce "yes" to bool: expected true or false`},
		{arrow.BinaryTypes.String, []byte("ab"), "cannot coerce 2 bytes to utf8: expected a string"},
		{arrow.BinaryTypes.String, struct{}{}, "cannot coerce a value of Go type struct {} to utf8: expected a string"},
		{arrow.FixedWidthTypes.Date32, strings.Repeat("x", 100), `cannot coerce "` + strings.Repeat("x", 64) + `"... to date32`},
	}
	for _, tc := range tests {
		_, err := Coerce(tc.typ, tc.in)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Coerce(%s, %#v): error %v, want %q", tc.typ, tc.in, err, tc.want)
		}
	}
}

// TestCoerceBytesCopy checks that a []byte value does not alias its input.
func TestCoerceBytesCopy(t *testing.T) {
	in := []byte("abc")
	got, err := Coerce(arrow.BinaryTypes.Binary, in)
	if err != nil {
		t.Fatal(err)
	}
	in[0] = 'x'
	if string(got.([]byte)) != "abc" {
		t.Errorf("Coerce aliased its input: %q", got)
	}
}

// TestCoerceAppends checks that coerced values are what Append takes, for
// every type of the protocol that takes a literal.
func TestCoerceAppends(t *testing.T) {
	literals := map[string]any{
		"BOOLEAN": true, "TINYINT": num("1"), "SMALLINT": num("1"), "INT": num("1"), "BIGINT": num("1"),
		"FLOAT": num("1.5"), "DOUBLE": num("1.5"), "DECIMAL(10,2)": "1.5", "DECIMAL(38,10)": "1.5",
		"STRING": "s", "BYTES": "b", "DATE": "2026-11-30", "TIME": "12:00:00", "TIME(9)": "12:00:00.5",
		"TIMESTAMP(3)": num("1"), "TIMESTAMP(6)": num("1"), "TIMESTAMP(9)": num("1"),
		"TIMESTAMP_LTZ(3)": "2026-11-30T12:00:00Z", "TIMESTAMP_LTZ(6)": num("1"),
	}
	for sql, lit := range literals {
		dt := coerceType(t, sql)
		v, err := Coerce(dt, lit)
		if err != nil {
			t.Fatalf("Coerce(%s, %#v): %v", sql, lit, err)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Append(%s, %#v) panicked: %v", sql, v, r)
				}
			}()
			b := array.NewBuilder(memtest.Allocator(t), dt)
			defer b.Release()
			Append(b, v)
			arr := b.NewArray()
			defer arr.Release()
			if got := Get(arr, 0); !reflect.DeepEqual(got, v) {
				t.Errorf("%s: Get after Append = %#v, want %#v", sql, got, v)
			}
		}()
	}
}

// TestCoerceTimestampMatchesTime checks random instants, written with and
// without zones, against the time package, in every unit.
func TestCoerceTimestampMatchesTime(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	units := []arrow.TimeUnit{arrow.Second, arrow.Millisecond, arrow.Microsecond, arrow.Nanosecond}
	for range 2000 {
		// 1678 to 2261, so that every unit holds it.
		sec := rnd.Int64N(584*365*86400) - 292*365*86400
		nsec := rnd.Int64N(1e9)
		off := (rnd.IntN(48) - 24) * 1800
		inst := time.Unix(sec, nsec).In(time.FixedZone("", off))
		for _, u := range units {
			digits := unitDigits(u)
			inst := inst.Truncate(time.Duration(pow10i(9 - digits)))
			want := arrow.Timestamp(inst.UnixNano() / pow10i(9-digits))
			local := inst.Format("2006-01-02T15:04:05.999999999")
			zoned := inst.Format("2006-01-02T15:04:05.999999999Z07:00")
			utc := inst.UTC().Format("2006-01-02 15:04:05.999999999")
			ltz := &arrow.TimestampType{Unit: u, TimeZone: "UTC"}
			for _, c := range []struct {
				typ arrow.DataType
				in  string
			}{{ltz, zoned}, {ltz, utc}, {&arrow.TimestampType{Unit: u}, utc}} {
				got, err := Coerce(c.typ, c.in)
				if err != nil || got != want {
					t.Fatalf("Coerce(%s, %q) = %v, %v; want %d", c.typ, c.in, got, err, want)
				}
			}
			// A zone-less string on LTZ means UTC, not the wall clock.
			if got, _ := Coerce(ltz, local); off != 0 && got == want {
				t.Fatalf("Coerce(%s, %q) ignored that no zone means UTC", ltz, local)
			}
			if u != arrow.Second || inst.UnixMilli()%1000 == 0 {
				ms := inst.UnixMilli()
				got, err := Coerce(ltz, json.Number(strconv.FormatInt(ms, 10)))
				wantMS := arrow.Timestamp(time.UnixMilli(ms).UnixNano() / pow10i(9-digits))
				if err != nil || got != wantMS {
					t.Fatalf("Coerce(%s, %d) = %v, %v; want %d", ltz, ms, got, err, wantMS)
				}
			}
		}
	}
}
