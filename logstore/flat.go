package logstore

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
)

// flatColumn makes the array of a column of a flat type (fixed width,
// boolean, string, binary) straight from its node and its buffers in body,
// without arrow-go's IPC reader, which first parses the column's schema
// again: for the small frames that a follower of a busy table reads, that
// was most of the cost. ok is false for the other types; the IPC reader
// decodes those. The array holds its own references to body.
func flatColumn(dt arrow.DataType, layout *ipcmsg.RecordBatch, body *memory.Buffer) (arr arrow.Array, ok bool, err error) {
	lens, flat := flatLayout(dt)
	if !flat || len(layout.Nodes) != 1 {
		return nil, false, nil
	}
	n, nulls := layout.Nodes[0].Length, layout.Nodes[0].NullCount
	minLens := lens(n)
	if len(layout.Buffers) != len(minLens) || nulls < 0 || nulls > n || int64(body.Len()) < layout.BodyLength {
		return nil, true, fmt.Errorf("%s column: %d buffers, %d of %d rows null, in a %d-byte body", dt, len(layout.Buffers), nulls, n, body.Len())
	}
	bufs := make([]*memory.Buffer, len(minLens))
	defer func() {
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
	}()
	for k, b := range layout.Buffers {
		switch {
		case k == 0 && nulls == 0:
			continue // no validity bitmap needed
		case b.Length < minLens[k]:
			return nil, true, fmt.Errorf("%s column of %d rows: buffer %d has %d bytes, want %d", dt, n, k, b.Length, minLens[k])
		}
		bufs[k] = memory.SliceBuffer(body, int(b.Offset), int(b.Length))
	}
	data := array.NewData(dt, int(n), bufs, nil, int(nulls), 0)
	defer data.Release()
	return array.MakeFromData(data), true, nil
}

// flatLayout reports whether dt is a flat type: fixed width, boolean, string
// or binary. lens gives the least bytes each of its buffers takes for n
// values, the validity bitmap first.
func flatLayout(dt arrow.DataType) (lens func(n int64) []int64, ok bool) {
	bitmap := func(n int64) int64 { return (n + 7) / 8 }
	switch fw, isFixed := dt.(arrow.FixedWidthDataType); {
	case dt.ID() == arrow.STRING || dt.ID() == arrow.BINARY:
		return func(n int64) []int64 { return []int64{bitmap(n), offsetsLen(n, 4), 0} }, true
	case dt.ID() == arrow.LARGE_STRING || dt.ID() == arrow.LARGE_BINARY:
		return func(n int64) []int64 { return []int64{bitmap(n), offsetsLen(n, 8), 0} }, true
	case isFixed && dt.ID() != arrow.DICTIONARY && dt.ID() != arrow.EXTENSION:
		return func(n int64) []int64 { return []int64{bitmap(n), (n*int64(fw.BitWidth()) + 7) / 8} }, true
	}
	return nil, false
}

// offsetsLen is the size of the offsets of n values of width bytes.
func offsetsLen(n, width int64) int64 {
	if n == 0 {
		return 0 // writers may leave the offsets of no values out
	}
	return (n + 1) * width
}
