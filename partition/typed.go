package partition

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Bounds returns the least and the greatest value of a column of type dt
// whose partition value (ValueString) is s, as the Go values statistics hold
// (package row's), so that a filter can be judged on a partition before it
// is opened. They are one value for every key type but a TIME finer than
// milliseconds, whose partition value keeps only the millisecond. Every NaN
// has the partition value "NaN"; the bounds are NaN, which row.Compare holds
// equal to every NaN.
//
// false when no value of dt has the partition value s (a partition created
// by name in another spelling, such as "007" for an INT, to which no row is
// routed) or dt is not a key type: the partition is then planned.
func Bounds(dt arrow.DataType, s string) (lo, hi any, ok bool) {
	switch dt := dt.(type) {
	case *arrow.Time32Type:
		return timeBounds(s, dt.Unit, math.MinInt32, math.MaxInt32, func(v int64) any { return arrow.Time32(v) })
	case *arrow.Time64Type:
		return timeBounds(s, dt.Unit, math.MinInt64, math.MaxInt64, func(v int64) any { return arrow.Time64(v) })
	}
	v, ok := exact(dt, s)
	return v, v, ok
}

// exact returns the one value of type dt whose partition value is s.
func exact(dt arrow.DataType, s string) (any, bool) {
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING:
		return s, true
	case arrow.BINARY:
		return inverse(s, hex.DecodeString, hex.EncodeToString)
	case arrow.BOOL:
		return inverse(s, strconv.ParseBool, strconv.FormatBool)
	case arrow.INT8:
		return intInverse[int8](s, 8)
	case arrow.INT16:
		return intInverse[int16](s, 16)
	case arrow.INT32:
		return intInverse[int32](s, 32)
	case arrow.INT64:
		return intInverse[int64](s, 64)
	case arrow.FLOAT32:
		return floatInverse[float32](s, 32)
	case arrow.FLOAT64:
		return floatInverse[float64](s, 64)
	case arrow.DATE32:
		return inverse(s, parseDate, func(d arrow.Date32) string { return DateString(int32(d)) })
	case arrow.TIMESTAMP:
		unit := dt.(*arrow.TimestampType).Unit
		if unit == arrow.Second {
			// No key type is stored in seconds, and time.Unix overflows
			// near the ends of their int64, naming two values alike.
			return nil, false
		}
		return inverse(s, func(s string) (arrow.Timestamp, error) { return parseTimestamp(s, unit) },
			func(v arrow.Timestamp) string { return TimestampString(int64(v), unit) })
	}
	return nil, false
}

// inverse parses s and keeps the value only if formatting it gives s again,
// which refuses the spellings a parser accepts besides the one ValueString
// writes ("+7", "TRUE", "0AFF", "1_50"). Each format is one to one, so that
// value is the only one whose partition value is s.
func inverse[T any](s string, parse func(string) (T, error), format func(T) string) (any, bool) {
	v, err := parse(s)
	if err != nil || format(v) != s {
		return nil, false
	}
	return v, true
}

func intInverse[T int8 | int16 | int32 | int64](s string, bits int) (any, bool) {
	return inverse(s,
		func(s string) (T, error) { v, err := strconv.ParseInt(s, 10, bits); return T(v), err },
		func(v T) string { return strconv.FormatInt(int64(v), 10) })
}

// floatInverse reads javaFloat's spelling: "_" for the point, "E" before the
// exponent, NaN, Inf and -Inf. Its digits are the shortest that parse back
// to the value (strconv's), so every float has a spelling of its own.
func floatInverse[T float32 | float64](s string, bits int) (any, bool) {
	return inverse(s,
		func(s string) (T, error) {
			v, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", "."), bits)
			return T(v), err
		},
		func(v T) string { return javaFloat(float64(v), bits) })
}

// parseDate reads DateString's yyyy-MM-dd, whose year may be negative or
// longer than four digits.
func parseDate(s string) (arrow.Date32, error) {
	year, f, err := splitYear(s, 2)
	if err != nil {
		return 0, err
	}
	days := time.Date(year, time.Month(f[0]), f[1], 0, 0, 0, 0, time.UTC).Unix() / 86400
	if days < math.MinInt32 || days > math.MaxInt32 {
		return 0, strconv.ErrRange
	}
	return arrow.Date32(days), nil
}

// parseTimestamp reads TimestampString's yyyy-MM-dd-HH-mm-ss_ and up to nine
// digits of the second's fraction, as a value of unit (not seconds).
func parseTimestamp(s string, unit arrow.TimeUnit) (arrow.Timestamp, error) {
	head, frac, ok := cutLast(s, "_")
	if !ok || len(frac) > 9 || !digits(frac) {
		return 0, strconv.ErrSyntax
	}
	year, f, err := splitYear(head, 5)
	if err != nil {
		return 0, err
	}
	nanos, _ := strconv.Atoi(frac + strings.Repeat("0", 9-len(frac)))
	perUnit := int(unit.Multiplier())
	if nanos%perUnit != 0 {
		return 0, strconv.ErrRange // finer than the unit holds
	}
	t := time.Date(year, time.Month(f[0]), f[1], f[2], f[3], f[4], 0, time.UTC)
	// A result beyond int64 wraps to a value that formats otherwise, which
	// inverse refuses.
	return arrow.Timestamp(t.Unix()*int64(time.Second/unit.Multiplier()) + int64(nanos/perUnit)), nil
}

// timeBounds returns the values of a TIME column in unit, held in
// [minV, maxV], whose partition value is s: TimeString's HH-mm-ss_SSS
// of milliseconds. A unit finer than milliseconds has a range of values per
// millisecond, cut toward zero, so the millisecond 0 also has the values
// just below it. Only digits are read: a time before midnight has a minus
// sign among its fields, and the times from midnight on are one to one with
// their partition values.
func timeBounds(s string, unit arrow.TimeUnit, minV, maxV int64, typed func(int64) any) (lo, hi any, ok bool) {
	ms, ok := parseTime(s)
	if !ok || TimeString(ms) != s {
		return nil, nil, false
	}
	perMs := int64(time.Millisecond / unit.Multiplier())
	if perMs == 0 { // a unit coarser than milliseconds: one value, if any
		msPer := int64(unit.Multiplier() / time.Millisecond)
		if ms%msPer != 0 || ms/msPer > maxV {
			return nil, nil, false
		}
		return typed(ms / msPer), typed(ms / msPer), true
	}
	if ms > maxV/perMs {
		return nil, nil, false
	}
	first := ms * perMs
	last := first + min(perMs-1, maxV-first)
	if ms == 0 {
		first = max(minV, -(perMs - 1))
	}
	return typed(first), typed(last), true
}

// parseTime reads HH-mm-ss_SSS, hours of two or more digits, as
// milliseconds; false for a minus sign in the fields (no "-" but the two
// between them).
func parseTime(s string) (int64, bool) {
	head, frac, ok := cutLast(s, "_")
	if !ok || len(frac) != 3 || !digits(frac) || strings.Count(head, "-") != 2 {
		return 0, false
	}
	hours, f, err := splitYear(head, 2)
	if err != nil || hours > math.MaxInt64/3_600_000/2 {
		return 0, false
	}
	millis, _ := strconv.Atoi(frac)
	return int64(hours)*3_600_000 + int64(f[0])*60_000 + int64(f[1])*1000 + int64(millis), true
}

// splitYear splits a leading number (a year, or hours), as %04d or %02d
// prints it, from the n fields of two digits that follow it, each after a
// "-". The caller's round trip refuses what formats otherwise.
func splitYear(s string, n int) (int, []int, error) {
	cut := len(s) - 3*n
	if cut < 1 {
		return 0, nil, strconv.ErrSyntax
	}
	lead, err := strconv.Atoi(s[:cut])
	if err != nil {
		return 0, nil, err
	}
	fields := make([]int, n)
	for i := range fields {
		f := s[cut+3*i : cut+3*i+3]
		if f[0] != '-' || !digits(f[1:]) {
			return 0, nil, strconv.ErrSyntax
		}
		fields[i], _ = strconv.Atoi(f[1:])
	}
	return lead, fields, nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func digits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
