package lake

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// RangeError is a value a record holds that the lake cannot: Iceberg keeps
// timestamps as 64-bit microseconds since 1970 (years −290308 to 294247),
// so a TIMESTAMP or TIMESTAMP_LTZ of precision 0 to 3, whose seconds or
// milliseconds fill 64 bits, holds instants the lake has no value for.
type RangeError struct {
	Column string
	Row    int    // of the record checked (the top-level row of a nested value)
	Value  string // the value as stored, with its unit
}

// Error names the column and the value; the caller says which row.
func (e *RangeError) Error() string {
	return fmt.Sprintf("column %s: %s is beyond the lake's range (Iceberg keeps timestamps as 64-bit microseconds since 1970, years -290308 to 294247)", e.Column, e.Value)
}

// CheckRange returns a *RangeError for the first value of rec, in column
// order, that the lake cannot hold, or nil.
func CheckRange(rec arrow.RecordBatch) error {
	for i, c := range rec.Columns() {
		if !mayExceed(c.DataType()) {
			continue
		}
		if row, v, bad := firstBeyond(c); bad {
			return &RangeError{Column: rec.Schema().Field(i).Name, Row: row, Value: v}
		}
	}
	return nil
}

// CheckRow returns a *RangeError for the first value of r, a row of
// schema's columns as row values, that the lake cannot hold, or nil.
func CheckRow(schema *arrow.Schema, r []any) error {
	for i, f := range schema.Fields() {
		ts, ok := f.Type.(*arrow.TimestampType)
		if v, isTs := r[i].(arrow.Timestamp); ok && isTs && beyond(int64(v), ts.Unit) {
			return &RangeError{Column: f.Name, Value: fmt.Sprintf("%d%s", v, ts.Unit)}
		}
	}
	return nil
}

// beyond reports whether a timestamp v in unit is beyond what 64-bit
// microseconds hold. Go's division truncates, so both bounds times the
// microseconds per unit stay within 64 bits.
func beyond(v int64, unit arrow.TimeUnit) bool {
	if unit != arrow.Second && unit != arrow.Millisecond {
		return false
	}
	perUnit := int64(unit.Multiplier() / time.Microsecond)
	return v < math.MinInt64/perUnit || v > math.MaxInt64/perUnit
}

// mayExceed reports whether a column of type t may hold values beyond the
// lake's range: a timestamp coarser than microseconds, also nested.
func mayExceed(t arrow.DataType) bool {
	switch t := t.(type) {
	case *arrow.TimestampType:
		return t.Unit == arrow.Second || t.Unit == arrow.Millisecond
	case arrow.ListLikeType:
		return mayExceed(t.Elem())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if mayExceed(f.Type) {
				return true
			}
		}
	}
	return false
}

// firstBeyond finds the first row of arr with a value beyond the lake's
// range: its row and the value.
func firstBeyond(arr arrow.Array) (row int, value string, bad bool) {
	switch a := arr.(type) {
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		for i, v := range a.Values() {
			if beyond(int64(v), unit) && a.IsValid(i) {
				return i, fmt.Sprintf("%d%s", v, unit), true
			}
		}
	case array.ListLike:
		at, v, bad := firstBeyond(a.ListValues())
		if !bad {
			return 0, "", false
		}
		// The row whose list holds child value at; the first when none
		// does (the cast of the whole child array fails on it all the same).
		row := sort.Search(a.Len(), func(i int) bool { _, end := a.ValueOffsets(i); return end > int64(at) })
		return min(row, max(a.Len()-1, 0)), v, true
	case *array.Struct:
		for k := range a.NumField() {
			if row, v, bad := firstBeyond(a.Field(k)); bad {
				return row, v, true
			}
		}
	}
	return 0, "", false
}
