package partition

import (
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Typed returns a partition value as the Go value statistics hold for a
// column of type dt (package row's values), the inverse of ValueString, so a
// filter can be judged on it; false when the type has no exact inverse here
// (floats, times, timestamps, bytes), which leaves the value unknown.
func Typed(dt arrow.DataType, s string) (any, bool) {
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING:
		return s, true
	case arrow.BOOL:
		v, err := strconv.ParseBool(s)
		return v, err == nil
	case arrow.INT8:
		v, err := strconv.ParseInt(s, 10, 8)
		return int8(v), err == nil
	case arrow.INT16:
		v, err := strconv.ParseInt(s, 10, 16)
		return int16(v), err == nil
	case arrow.INT32:
		v, err := strconv.ParseInt(s, 10, 32)
		return int32(v), err == nil
	case arrow.INT64:
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil
	case arrow.DATE32:
		t, err := time.Parse("2006-01-02", s)
		return arrow.Date32FromTime(t), err == nil
	}
	return nil, false
}
