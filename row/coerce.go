package row

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/fluxgate-io/fluxgate/errs"
)

// Coerce converts a literal decoded from JSON (with json.Decoder.UseNumber:
// json.Number, string, bool or nil; float64 and Go's integer types are
// accepted too) into the Go value of Arrow type t, as PROTOCOL.md section 4.4
// says. Conversions are exact: a value that the type cannot hold without
// rounding or truncation is an error.
//
//   - Integers take a number with an integral value in the type's range
//     (3, 3.0 and 3e0 alike; not 3.5, nor 300 for int8).
//   - Floats take a number, rounded to the nearest float of the width; a finite
//     number beyond the width's range is an error. The strings "NaN",
//     "Infinity" and "-Infinity" name the values JSON has no number for.
//   - Decimals take a string or a number ("100.00" for DECIMAL(10,2)) that has
//     at most scale digits after the point and precision-scale before it.
//     A float64 counts as its shortest decimal form (0.1 is "0.1").
//   - Strings take a string, and only a string.
//   - Binaries take a string, whose UTF-8 bytes are the value, or a []byte
//     (copied); a fixed-size binary needs exactly its width of bytes.
//   - Booleans take true or false, and only those.
//   - Dates take "YYYY-MM-DD".
//   - Times take "HH:MM:SS[.fraction]" (00:00:00 to 23:59:59.999999999).
//   - Timestamps take "YYYY-MM-DDTHH:MM:SS[.fraction]" (a space may replace
//     the T) or an integral number of milliseconds since the Unix epoch. A
//     timestamp type with a time zone (TIMESTAMP_LTZ, zone "UTC") also takes a
//     zone suffix on the string, "Z" or "+hh:mm"/"-hh:mm", and converts to
//     UTC; without a suffix the string is UTC. A zone on a timestamp type
//     without one is an error.
//
// A time or timestamp fraction finer than the type's unit is an error unless
// the extra digits are zeros, as are epoch milliseconds that the unit (only
// seconds) cannot hold or that overflow it (nanoseconds span 1677 to 2262).
// Nested and other types take no literal. nil gives (nil, nil): whether NULL
// is allowed is the caller's business. Errors are errs.InvalidArgument and name the
// value and the type, not the column.
func Coerce(t arrow.DataType, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	out, why := coerce(t, v)
	if why != "" {
		return nil, errs.New(errs.InvalidArgument, "cannot coerce %s to %s: %s", describeLiteral(v), t, why)
	}
	return out, nil
}

// coerce does Coerce's work for a non-nil v; it returns why v does not
// coerce rather than an error.
func coerce(t arrow.DataType, v any) (any, string) {
	switch t := t.(type) {
	case *arrow.BooleanType:
		if b, ok := v.(bool); ok {
			return b, ""
		}
		return nil, "expected true or false"
	case *arrow.Int8Type:
		n, why := coerceInt(v, 8)
		return int8(n), why
	case *arrow.Int16Type:
		n, why := coerceInt(v, 16)
		return int16(n), why
	case *arrow.Int32Type:
		n, why := coerceInt(v, 32)
		return int32(n), why
	case *arrow.Int64Type:
		return coerceInt(v, 64)
	case *arrow.Float32Type:
		f, why := coerceFloat(v, 32)
		return float32(f), why
	case *arrow.Float64Type:
		return coerceFloat(v, 64)
	case *arrow.Decimal128Type:
		return coerceDecimal(t, v)
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		if s, ok := v.(string); ok {
			return s, ""
		}
		return nil, "expected a string"
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType:
		return coerceBytes(v, -1)
	case *arrow.FixedSizeBinaryType:
		return coerceBytes(v, t.ByteWidth)
	case *arrow.Date32Type:
		s, ok := v.(string)
		if !ok {
			return nil, `expected a date string "YYYY-MM-DD"`
		}
		days, rest, ok := parseDate(s)
		if !ok || rest != "" {
			return nil, `expected a valid date "YYYY-MM-DD"`
		}
		return arrow.Date32(days), ""
	case *arrow.Time32Type:
		n, why := coerceTime(t.Unit, v)
		return arrow.Time32(n), why
	case *arrow.Time64Type:
		n, why := coerceTime(t.Unit, v)
		return arrow.Time64(n), why
	case *arrow.TimestampType:
		return coerceTimestamp(t, v)
	case arrow.NestedType:
		return nil, "nested types take no literal"
	}
	return nil, "the type takes no literal"
}

// coerceInt returns v as an integer of the given width, or why not.
func coerceInt(v any, bits int) (int64, string) {
	if f, ok := v.(float32); ok {
		v = float64(f)
	}
	if f, ok := v.(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
		// The float's exact value: its shortest form ("4.611686018427388e+18"
		// for 1<<62) need not be an integer's digits.
		bf := new(big.Float).SetFloat64(f)
		if !bf.IsInt() {
			return 0, "not an integer"
		}
		n, _ := bf.Int(nil)
		v = json.Number(n.String())
	}
	s, ok := numberText(v)
	if !ok {
		return 0, "expected an integer"
	}
	d, ok := parseDecimal(s)
	switch {
	case !ok:
		return 0, "not a number"
	case d.exp < 0:
		return 0, "not an integer"
	}
	limit := int64(1) << (bits - 1)
	outOfRange := fmt.Sprintf("out of range [%d, %d]", -limit, limit-1)
	if len(d.digits)+d.exp > 19 { // 19 digits hold every int64
		return 0, outOfRange
	}
	n, err := strconv.ParseInt(d.integer(), 10, bits)
	if err != nil {
		return 0, outOfRange
	}
	return n, ""
}

// coerceFloat returns v as a float of the given width, or why not.
func coerceFloat(v any, bits int) (float64, string) {
	switch v := v.(type) {
	case float64:
		if bits == 32 && !math.IsInf(v, 0) && math.IsInf(float64(float32(v)), 0) {
			return 0, "out of range for float32"
		}
		return v, ""
	case float32:
		return float64(v), ""
	case string:
		if f, ok := nonFinite[v]; ok {
			return f, ""
		}
		return 0, `expected a number, "NaN", "Infinity" or "-Infinity"`
	}
	s, ok := numberText(v)
	if !ok {
		return 0, "expected a number"
	}
	if _, ok := parseDecimal(s); !ok {
		return 0, "not a number"
	}
	f, err := strconv.ParseFloat(s, bits)
	if err != nil && math.IsInf(f, 0) { // underflow rounds to zero, like any float
		return 0, fmt.Sprintf("out of range for float%d", bits)
	}
	return f, ""
}

// nonFinite are the floats without a JSON number, by the names JSON
// libraries (Jackson, JavaScript) give them.
var nonFinite = map[string]float64{"NaN": math.NaN(), "Infinity": math.Inf(1), "-Infinity": math.Inf(-1)}

// coerceDecimal returns v as a decimal of type t, or why not.
func coerceDecimal(t *arrow.Decimal128Type, v any) (any, string) {
	s, ok := v.(string)
	if !ok {
		if s, ok = numberText(v); !ok {
			return nil, "expected a decimal string or a number"
		}
	}
	d, ok := parseDecimal(s)
	if !ok {
		return nil, "not a decimal number"
	}
	prec, scale := int(t.Precision), int(t.Scale)
	e := d.exp + scale // the unscaled value is digits × 10^e
	switch {
	case d.digits == "":
		return decimal128.Num{}, ""
	case e < 0 && scale >= 0:
		return nil, fmt.Sprintf("more than %d digits after the point", scale)
	case e < 0:
		return nil, fmt.Sprintf("not a multiple of 1e%d", -scale)
	case len(d.digits)+e > prec:
		return nil, fmt.Sprintf("more than %d digits in all (%d after the point)", prec, scale)
	}
	d.exp = e
	n, ok := new(big.Int).SetString(d.integer(), 10)
	if !ok {
		panic("row: bad unscaled decimal " + d.integer())
	}
	return decimal128.FromBigInt(n), ""
}

// coerceBytes returns v as bytes, of length width unless width is negative,
// or why not.
func coerceBytes(v any, width int) (any, string) {
	var b []byte
	switch v := v.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = append([]byte{}, v...)
	default:
		return nil, "expected a string"
	}
	if width >= 0 && len(b) != width {
		return nil, fmt.Sprintf("%d bytes, not %d", len(b), width)
	}
	return b, ""
}

// coerceTime returns v, a time of day, in unit, or why not.
func coerceTime(unit arrow.TimeUnit, v any) (int64, string) {
	const want = `expected a time "HH:MM:SS[.fraction]"`
	s, ok := v.(string)
	if !ok {
		return 0, want
	}
	secs, frac, rest, ok := parseClock(s)
	if !ok || rest != "" {
		return 0, want
	}
	digits := unitDigits(unit)
	f, ok := fraction(frac, digits)
	if !ok {
		return 0, fmt.Sprintf("fraction of a second finer than the unit (%s)", unit)
	}
	return secs*pow10i(digits) + f, ""
}

// coerceTimestamp returns v as a timestamp of type t, or why not.
func coerceTimestamp(t *arrow.TimestampType, v any) (any, string) {
	digits := unitDigits(t.Unit)
	perSec := pow10i(digits)
	ltz := t.TimeZone != ""
	s, ok := v.(string)
	if !ok {
		if _, ok := numberText(v); !ok {
			return nil, "expected a timestamp string or epoch milliseconds"
		}
		ms, why := coerceInt(v, 64)
		if why != "" {
			return nil, "epoch milliseconds " + why
		}
		switch {
		case digits == 0 && ms%1000 != 0:
			return nil, "epoch milliseconds finer than the unit (s)"
		case digits == 0:
			return arrow.Timestamp(ms / 1000), ""
		}
		n, ok := mulAdd(ms, perSec/1000, 0)
		if !ok {
			return nil, fmt.Sprintf("out of range for the unit (%s)", t.Unit)
		}
		return arrow.Timestamp(n), ""
	}

	want := `expected a timestamp "YYYY-MM-DDTHH:MM:SS[.fraction]"`
	if ltz {
		want = `expected a timestamp "YYYY-MM-DDTHH:MM:SS[.fraction][Z|+hh:mm]"`
	}
	days, rest, ok := parseDate(s)
	if !ok || rest == "" || (rest[0] != 'T' && rest[0] != ' ') {
		return nil, want
	}
	secs, frac, rest, ok := parseClock(rest[1:])
	if !ok {
		return nil, want
	}
	var offset int64
	if rest != "" {
		if offset, ok = parseZone(rest); !ok {
			return nil, want
		}
		if !ltz {
			return nil, "a timestamp without time zone takes no zone"
		}
	}
	f, ok := fraction(frac, digits)
	if !ok {
		return nil, fmt.Sprintf("fraction of a second finer than the unit (%s)", t.Unit)
	}
	n, ok := mulAdd(days*86400+secs-offset, perSec, f)
	if !ok {
		return nil, fmt.Sprintf("out of range for the unit (%s)", t.Unit)
	}
	return arrow.Timestamp(n), ""
}

// numberText returns the decimal text of a number v, and false if v is not a
// number. Non-finite floats give text that parseDecimal rejects.
func numberText(v any) (string, bool) {
	switch v := v.(type) {
	case json.Number:
		return string(v), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32), true
	case int:
		return strconv.FormatInt(int64(v), 10), true
	case int8:
		return strconv.FormatInt(int64(v), 10), true
	case int16:
		return strconv.FormatInt(int64(v), 10), true
	case int32:
		return strconv.FormatInt(int64(v), 10), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case uint:
		return strconv.FormatUint(uint64(v), 10), true
	case uint8:
		return strconv.FormatUint(uint64(v), 10), true
	case uint16:
		return strconv.FormatUint(uint64(v), 10), true
	case uint32:
		return strconv.FormatUint(uint64(v), 10), true
	case uint64:
		return strconv.FormatUint(v, 10), true
	}
	return "", false
}

// decimalText is a parsed decimal number: ±digits × 10^exp.
type decimalText struct {
	neg    bool
	digits string // without leading or trailing zeros; "" for zero
	exp    int
}

// maxExp bounds the exponents parseDecimal keeps: larger ones are out of
// range (or inexact) for every type anyway, and would only cost memory.
const maxExp = 1 << 20

// parseDecimal parses [+-]digits[.digits][(e|E)[+-]digits], where either run
// of mantissa digits may be empty but not both.
func parseDecimal(s string) (d decimalText, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		d.neg = s[i] == '-'
		i++
	}
	start := i
	for i < len(s) && isDecDigit(s[i]) {
		i++
	}
	intPart, frac := s[start:i], ""
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && isDecDigit(s[i]) {
			i++
		}
		frac = s[start:i]
	}
	if intPart == "" && frac == "" {
		return d, false
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		start = i
		for ; i < len(s) && isDecDigit(s[i]); i++ {
			if exp < maxExp {
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if i == start {
			return d, false
		}
		if neg {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, false
	}
	all := strings.TrimLeft(intPart+frac, "0")
	d.digits = strings.TrimRight(all, "0")
	d.exp = exp - len(frac) + len(all) - len(d.digits)
	if d.digits == "" {
		d = decimalText{}
	}
	return d, true
}

// integer returns the decimal text of d, which must be an integer (exp >= 0).
func (d decimalText) integer() string {
	if d.digits == "" {
		return "0"
	}
	s := d.digits + strings.Repeat("0", d.exp)
	if d.neg {
		s = "-" + s
	}
	return s
}

// parseDate parses "YYYY-MM-DD" at the start of s: days since the Unix epoch
// and the rest of s.
func parseDate(s string) (days int64, rest string, ok bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return 0, "", false
	}
	y, ok1 := digitsValue(s[0:4])
	m, ok2 := digitsValue(s[5:7])
	d, ok3 := digitsValue(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 {
		return 0, "", false
	}
	t := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC)
	if t.Day() != int(d) { // February 30 and the like
		return 0, "", false
	}
	return t.Unix() / 86400, s[10:], true
}

// parseClock parses "HH:MM:SS[.fraction]" at the start of s: seconds since
// midnight, the digits of the fraction and the rest of s.
func parseClock(s string) (secs int64, frac, rest string, ok bool) {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return 0, "", "", false
	}
	h, ok1 := digitsValue(s[0:2])
	m, ok2 := digitsValue(s[3:5])
	sec, ok3 := digitsValue(s[6:8])
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 59 {
		return 0, "", "", false
	}
	rest = s[8:]
	if rest != "" && rest[0] == '.' {
		i := 1
		for i < len(rest) && isDecDigit(rest[i]) {
			i++
		}
		if i == 1 {
			return 0, "", "", false
		}
		frac, rest = rest[1:i], rest[i:]
	}
	return h*3600 + m*60 + sec, frac, rest, true
}

// parseZone parses a whole zone suffix, "Z" or "+hh:mm" or "-hh:mm": its
// offset from UTC in seconds.
func parseZone(s string) (int64, bool) {
	if s == "Z" {
		return 0, true
	}
	if len(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' {
		return 0, false
	}
	h, ok1 := digitsValue(s[1:3])
	m, ok2 := digitsValue(s[4:6])
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, false
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// fraction returns the fraction of a second given by the digits frac in units
// of 10^-digits seconds, and false if frac has non-zero digits beyond those.
func fraction(frac string, digits int) (int64, bool) {
	if len(frac) > digits {
		if strings.Trim(frac[digits:], "0") != "" {
			return 0, false
		}
		frac = frac[:digits]
	}
	var n int64
	for i := range digits {
		n *= 10
		if i < len(frac) {
			n += int64(frac[i] - '0')
		}
	}
	return n, true
}

// unitDigits is the number of decimal digits of a second that unit holds.
func unitDigits(unit arrow.TimeUnit) int {
	switch unit {
	case arrow.Second:
		return 0
	case arrow.Millisecond:
		return 3
	case arrow.Microsecond:
		return 6
	}
	return 9
}

func pow10i(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// mulAdd returns a*m + b for m > 0 and 0 <= b < m, and false on overflow.
func mulAdd(a, m, b int64) (int64, bool) {
	if a < 0 && b > 0 { // the same sum, without overflowing on the way
		a, b = a+1, b-m
	}
	switch {
	case a > 0 && a > (math.MaxInt64-b)/m: // here b >= 0
		return 0, false
	case a < 0 && a < (math.MinInt64-b)/m: // here b <= 0
		return 0, false
	}
	return a*m + b, true
}

// digitsValue returns the value of s, which must be all decimal digits.
func digitsValue(s string) (int64, bool) {
	var n int64
	for i := 0; i < len(s); i++ {
		if !isDecDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}

func isDecDigit(c byte) bool { return '0' <= c && c <= '9' }

// describeLiteral names v for an error message, clipping long text.
func describeLiteral(v any) string {
	const limit = 64
	clip := func(s string) string {
		if len(s) > limit {
			return s[:limit] + "..."
		}
		return s
	}
	switch v := v.(type) {
	case string:
		if len(v) > limit {
			return strconv.Quote(v[:limit]) + "..."
		}
		return strconv.Quote(v)
	case json.Number:
		return clip(string(v))
	case []byte:
		return fmt.Sprintf("%d bytes", len(v))
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case bool, float32, float64, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("a value of Go type %T", v)
}
