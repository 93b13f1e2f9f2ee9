package ipcmsg

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// BufferError is what is wrong with one buffer of a message, so that a
// caller can name the column it belongs to (ColumnOfBuffer).
type BufferError struct {
	Buffer int
	Err    error
}

func (e *BufferError) Error() string { return fmt.Sprintf("ipcmsg: buffer %d: %v", e.Buffer, e.Err) }
func (e *BufferError) Unwrap() error { return e.Err }

// ColumnOfBuffer returns the column of schema that buffer i of rb, a record
// batch of schema, belongs to; false when rb's buffers are not laid out as
// schema says.
func ColumnOfBuffer(schema *arrow.Schema, rb *RecordBatch, i int) (int, bool) {
	variadic := rb.Variadic
	end := 0
	for c, f := range schema.Fields() {
		n, ok := buffersOf(f.Type, &variadic)
		if !ok {
			return 0, false
		}
		if end += n; i < end {
			return c, end <= len(rb.Buffers)
		}
	}
	return 0, false
}

// buffersOf counts the buffers of an array of dt and its children as IPC
// lays them out, taking the counts of view arrays' data buffers from
// variadic (in the same depth-first order). IPC writes no validity bitmap
// where the layout says it is always null (null, union and run-end encoded
// arrays).
func buffersOf(dt arrow.DataType, variadic *[]int64) (int, bool) {
	layout := dt.Layout()
	n := 0
	for _, b := range layout.Buffers {
		if b.Kind != arrow.KindAlwaysNull {
			n++
		}
	}
	if layout.VariadicSpec != nil {
		if len(*variadic) == 0 || (*variadic)[0] < 0 || (*variadic)[0] > math.MaxInt32 {
			return 0, false
		}
		n += int((*variadic)[0])
		*variadic = (*variadic)[1:]
	}
	if nested, ok := dt.(arrow.NestedType); ok {
		for _, f := range nested.Fields() {
			m, ok := buffersOf(f.Type, variadic)
			if !ok {
				return 0, false
			}
			n += m
		}
	}
	return n, true
}
