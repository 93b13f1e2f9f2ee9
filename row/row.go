// Package row holds one table row as Go values: it reads rows from Arrow
// arrays, appends them to Arrow builders, encodes them compactly for the
// primary-key store, and encodes primary keys so that byte order is key order
// and a key prefix encodes to a byte prefix. No I/O.
//
// The Go value of each Arrow type: bool, int8, int16, int32, int64, float32,
// float64; decimal128.Num for decimal128; string for utf8, large_utf8 and
// string_view; []byte for binary, large_binary, binary_view and
// fixed_size_binary; arrow.Date32, arrow.Time32, arrow.Time64 and
// arrow.Timestamp (unit and zone come from the column type); []any for list
// and large_list (nil for a null element); MapValue for map; []any for struct
// (one value per field). nil is NULL. Values never alias Arrow or input
// buffers, so rows outlive the records and byte slices they came from.
//
// Functions that cannot return an error (Get, Append, Encode, Compare) panic
// when a value does not match its column type: that is a bug in the caller,
// not bad input.
package row

import (
	"bytes"
	"cmp"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Row is one row: Row[i] is the value of column i, nil for NULL.
type Row []any

// MapValue is the value of a map column: its entries in order.
type MapValue []MapEntry

// MapEntry is one entry of a map; Key is never nil.
type MapEntry struct{ Key, Value any }

// Get returns the value at index i of arr, copied out of its buffers.
func Get(arr arrow.Array, i int) any {
	return get(arr, i, true)
}

// View is Get without the copy of a top-level string or binary value, which
// then aliases arr's memory: for values used only while arr is.
func View(arr arrow.Array, i int) any {
	return get(arr, i, false)
}

func get(arr arrow.Array, i int, copyBytes bool) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return a.Value(i)
	case *array.Int16:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Float32:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	case *array.Date32:
		return a.Value(i)
	case *array.Time32:
		return a.Value(i)
	case *array.Time64:
		return a.Value(i)
	case *array.Timestamp:
		return a.Value(i)
	case interface{ Value(int) string }: // utf8, large_utf8, string_view
		if !copyBytes {
			return a.Value(i)
		}
		return strings.Clone(a.Value(i))
	case interface{ Value(int) []byte }: // binary, large_binary, binary_view, fixed_size_binary
		if !copyBytes {
			return a.Value(i)
		}
		return append([]byte{}, a.Value(i)...)
	case *array.Map:
		start, end := a.ValueOffsets(i)
		keys, items := a.Keys(), a.Items()
		m := make(MapValue, end-start)
		for j := range m {
			k := int(start) + j
			m[j] = MapEntry{Get(keys, k), Get(items, k)}
		}
		return m
	case *array.List, *array.LargeList:
		ll := a.(array.ListLike)
		start, end := ll.ValueOffsets(i)
		elems := ll.ListValues()
		l := make([]any, end-start)
		for j := range l {
			l[j] = Get(elems, int(start)+j)
		}
		return l
	case *array.Struct:
		s := make([]any, a.NumField())
		for j := range s {
			s[j] = Get(a.Field(j), i)
		}
		return s
	}
	panic(fmt.Sprintf("row: unsupported array type %s", arr.DataType()))
}

// FromRecord returns row i of rec: all its columns when cols is nil, else the
// columns cols in that order.
func FromRecord(rec arrow.RecordBatch, i int, cols []int) Row {
	if cols == nil {
		r := make(Row, rec.NumCols())
		for j := range r {
			r[j] = Get(rec.Column(j), i)
		}
		return r
	}
	r := make(Row, len(cols))
	for j, c := range cols {
		r[j] = Get(rec.Column(c), i)
	}
	return r
}

// Append appends v to b; nil appends a null.
func Append(b array.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.AppendNull()
	case bool:
		b.(*array.BooleanBuilder).Append(v)
	case int8:
		b.(*array.Int8Builder).Append(v)
	case int16:
		b.(*array.Int16Builder).Append(v)
	case int32:
		b.(*array.Int32Builder).Append(v)
	case int64:
		b.(*array.Int64Builder).Append(v)
	case float32:
		b.(*array.Float32Builder).Append(v)
	case float64:
		b.(*array.Float64Builder).Append(v)
	case decimal128.Num:
		b.(*array.Decimal128Builder).Append(v)
	case arrow.Date32:
		b.(*array.Date32Builder).Append(v)
	case arrow.Time32:
		b.(*array.Time32Builder).Append(v)
	case arrow.Time64:
		b.(*array.Time64Builder).Append(v)
	case arrow.Timestamp:
		b.(*array.TimestampBuilder).Append(v)
	case string:
		b.(interface{ Append(string) }).Append(v)
	case []byte:
		b.(interface{ Append([]byte) }).Append(v)
	case MapValue:
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		kb, ib := mb.KeyBuilder(), mb.ItemBuilder()
		for _, e := range v {
			Append(kb, e.Key)
			Append(ib, e.Value)
		}
	case []any:
		switch b := b.(type) {
		case *array.StructBuilder:
			b.Append(true)
			for j, f := range v {
				Append(b.FieldBuilder(j), f)
			}
		case *array.ListBuilder, *array.LargeListBuilder:
			lb := b.(array.ListLikeBuilder)
			lb.Append(true)
			eb := lb.ValueBuilder()
			for _, e := range v {
				Append(eb, e)
			}
		default:
			panic(fmt.Sprintf("row: cannot append []any to %s", b.Type()))
		}
	default:
		panic(fmt.Sprintf("row: cannot append %T to %s", v, b.Type()))
	}
}

// AppendRow appends r to b, one value per field.
func AppendRow(b *array.RecordBuilder, r Row) {
	fields := b.Fields()
	if len(r) != len(fields) {
		panic(fmt.Sprintf("row: appending a row of %d values to a record of %d fields", len(r), len(fields)))
	}
	for i, v := range r {
		Append(fields[i], v)
	}
}

// Compare orders two values of scalar type t: nil first, false before true,
// strings and bytes by their bytes, and floats as keys order them (-0 equals
// 0, NaN equals NaN and sorts after +Inf). Decimals compare their unscaled
// values, since the values of a column share one scale. It panics on nested
// types.
func Compare(t arrow.DataType, a, b any) int {
	if a == nil || b == nil {
		return cmp.Compare(boolInt(a != nil), boolInt(b != nil))
	}
	switch t.ID() {
	case arrow.BOOL:
		return cmp.Compare(boolInt(a.(bool)), boolInt(b.(bool)))
	case arrow.INT8:
		return cmp.Compare(a.(int8), b.(int8))
	case arrow.INT16:
		return cmp.Compare(a.(int16), b.(int16))
	case arrow.INT32:
		return cmp.Compare(a.(int32), b.(int32))
	case arrow.INT64:
		return cmp.Compare(a.(int64), b.(int64))
	case arrow.FLOAT32:
		return compareFloat(a.(float32), b.(float32))
	case arrow.FLOAT64:
		return compareFloat(a.(float64), b.(float64))
	case arrow.DECIMAL128:
		return a.(decimal128.Num).Cmp(b.(decimal128.Num))
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return strings.Compare(a.(string), b.(string))
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return bytes.Compare(a.([]byte), b.([]byte))
	case arrow.DATE32:
		return cmp.Compare(a.(arrow.Date32), b.(arrow.Date32))
	case arrow.TIME32:
		return cmp.Compare(a.(arrow.Time32), b.(arrow.Time32))
	case arrow.TIME64:
		return cmp.Compare(a.(arrow.Time64), b.(arrow.Time64))
	case arrow.TIMESTAMP:
		return cmp.Compare(a.(arrow.Timestamp), b.(arrow.Timestamp))
	}
	panic(fmt.Sprintf("row: cannot compare values of type %s", t))
}

// Equal reports whether a and b, values of type t, are equal: nested values
// element by element (map entries in order), scalars as Compare sees them.
func Equal(t arrow.DataType, a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch t.ID() {
	case arrow.LIST, arrow.LARGE_LIST:
		elem := t.(arrow.ListLikeType).Elem()
		x, y := a.([]any), b.([]any)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(elem, x[i], y[i]) {
				return false
			}
		}
		return true
	case arrow.MAP:
		mt := t.(*arrow.MapType)
		x, y := a.(MapValue), b.(MapValue)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(mt.KeyType(), x[i].Key, y[i].Key) || !Equal(mt.ItemType(), x[i].Value, y[i].Value) {
				return false
			}
		}
		return true
	case arrow.STRUCT:
		st := t.(*arrow.StructType)
		x, y := a.([]any), b.([]any)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(st.Field(i).Type, x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return Compare(t, a, b) == 0
}

func compareFloat[F float32 | float64](a, b F) int {
	if aNaN, bNaN := a != a, b != b; aNaN || bNaN {
		return cmp.Compare(boolInt(aNaN), boolInt(bNaN))
	}
	return cmp.Compare(a, b)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
