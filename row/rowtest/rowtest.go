// Package rowtest makes row values for tests (and only for tests).
package rowtest

import "github.com/apache/arrow-go/v18/arrow"

// FromBits returns the value of dt made of u's bits (as many as dt is wide;
// a BOOL is u's lowest bit), for the types a row holds as integers: BOOL,
// INT8 to INT64, DATE32, TIME32, TIME64 and TIMESTAMP. ok is false for
// other types. Random tests draw u, often from edge values, and turn it into
// a value of each such type here.
func FromBits(dt arrow.DataType, u uint64) (v any, ok bool) {
	switch dt.ID() {
	case arrow.BOOL:
		return u&1 == 1, true
	case arrow.INT8:
		return int8(u), true
	case arrow.INT16:
		return int16(u), true
	case arrow.INT32:
		return int32(u), true
	case arrow.INT64:
		return int64(u), true
	case arrow.DATE32:
		return arrow.Date32(u), true
	case arrow.TIME32:
		return arrow.Time32(u), true
	case arrow.TIME64:
		return arrow.Time64(u), true
	case arrow.TIMESTAMP:
		return arrow.Timestamp(u), true
	}
	return nil, false
}
