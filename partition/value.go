package partition

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/errs"
)

// ValueString returns the partition value of row i of a partition-key
// column, converted as Fluss's PartitionUtils.convertValueOfType does, so
// that a row lands in the partition Fluss would name. A NULL is an error
// naming the column.
func ValueString(col string, arr arrow.Array, i int) (string, error) {
	if arr.IsNull(i) {
		return "", errs.New(errs.InvalidArgument, "partition key column %q is NULL; a partitioned table's rows need a value in every partition key", col)
	}
	switch a := arr.(type) {
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i)), nil
	case *array.Binary:
		return hex.EncodeToString(a.Value(i)), nil
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10), nil
	case *array.Float32:
		return javaFloat(float64(a.Value(i)), 32), nil
	case *array.Float64:
		return javaFloat(a.Value(i), 64), nil
	case *array.Date32:
		return DateString(int32(a.Value(i))), nil
	case *array.Time32:
		return TimeString(timeMillis(int64(a.Value(i)), a.DataType().(*arrow.Time32Type).Unit)), nil
	case *array.Time64:
		return TimeString(timeMillis(int64(a.Value(i)), a.DataType().(*arrow.Time64Type).Unit)), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return TimestampString(int64(a.Value(i)), unit), nil
	}
	return "", errs.New(errs.InvalidArgument, "partition key column %q has Arrow type %s, which cannot be a partition key", col, arr.DataType())
}

// timeMillis converts a time of day in unit to milliseconds, cutting finer
// digits toward zero; it divides rather than going through nanoseconds, which
// a TIME(6)'s int64 of microseconds may overflow.
func timeMillis(v int64, unit arrow.TimeUnit) int64 {
	if perMs := int64(time.Millisecond / unit.Multiplier()); perMs > 0 {
		return v / perMs
	}
	return v * int64(unit.Multiplier()/time.Millisecond)
}

// DateString formats days since the epoch as yyyy-MM-dd (Fluss's dayToString).
func DateString(days int32) string {
	t := time.Unix(int64(days)*86400, 0).UTC()
	return fmt.Sprintf("%04d-%02d-%02d", t.Year(), int(t.Month()), t.Day())
}

// TimeString formats a time of day, in milliseconds, as HH-mm-ss_SSS (Fluss's
// milliToString: a TIME is milliseconds there, so finer digits are cut).
func TimeString(ms int64) string {
	return fmt.Sprintf("%02d-%02d-%02d_%03d", ms/3_600_000, ms/60_000%60, ms/1000%60, ms%1000)
}

// TimestampString formats a timestamp as yyyy-MM-dd-HH-mm-ss_ and the
// fraction of the second without trailing zeros (Fluss's timestampToString,
// the same for TIMESTAMP and TIMESTAMP_LTZ, in UTC).
func TimestampString(v int64, unit arrow.TimeUnit) string {
	ts := arrow.Timestamp(v).ToTime(unit).UTC()
	frac := strings.TrimRight(fmt.Sprintf("%09d", ts.Nanosecond()), "0")
	return fmt.Sprintf("%04d-%02d-%02d-%02d-%02d-%02d_%s",
		ts.Year(), int(ts.Month()), ts.Day(), ts.Hour(), ts.Minute(), ts.Second(), frac)
}

// javaFloat formats f as Java's Float/Double.toString does, then replaces
// "." by "_" (Fluss's reformatFloat/reformatDouble).
func javaFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	var s string
	if abs := math.Abs(f); abs == 0 || abs >= 1e-3 && abs < 1e7 {
		s = strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		if f == 0 && math.Signbit(f) {
			s = "-0.0"
		}
	} else {
		mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, bits), "e")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		e, _ := strconv.Atoi(exp)
		s = mant + "E" + strconv.Itoa(e)
	}
	return strings.ReplaceAll(s, ".", "_")
}
