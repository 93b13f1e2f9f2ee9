package logstore

import (
	"encoding/binary"
	"fmt"
	"math"

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
//
// Everything in the layout comes from a frame, so it is bounded before it is
// used (ipcmsg.Parse has put the buffers inside the body): the row count
// against the body, each buffer against the least its type needs, and the
// offsets of strings and binaries, which the array would index later,
// against their values.
func flatColumn(dt arrow.DataType, layout *ipcmsg.RecordBatch, body *memory.Buffer) (arr arrow.Array, ok bool, err error) {
	lens, flat := flatLayout(dt)
	if !flat || len(layout.Nodes) != 1 {
		return nil, false, nil
	}
	n, nulls := layout.Nodes[0].Length, layout.Nodes[0].NullCount
	// Every row takes a bit at least: a larger count cannot be true, and
	// the sizes computed from it could overflow.
	if n < 0 || n > 8*int64(body.Len()) {
		return nil, true, fmt.Errorf("%s column: %d rows in a %d-byte body", dt, n, body.Len())
	}
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
		case b.Length < minLens[k] || minLens[k] < 0:
			return nil, true, fmt.Errorf("%s column of %d rows: buffer %d has %d bytes, want %d", dt, n, k, b.Length, minLens[k])
		}
		bufs[k] = memory.SliceBuffer(body, int(b.Offset), int(b.Length))
	}
	if len(bufs) == 3 && n > 0 {
		if err := checkOffsets(bufs[1].Bytes(), minLens[1]/(n+1), n, bufs[2]); err != nil {
			return nil, true, fmt.Errorf("%s column of %d rows: %w", dt, n, err)
		}
	}
	data := array.NewData(dt, int(n), bufs, nil, int(nulls), 0)
	defer data.Release()
	return array.MakeFromData(data), true, nil
}

// checkOffsets verifies the n+1 offsets (of width bytes each) of n string
// or binary values: from 0 on, never decreasing, and within the values.
func checkOffsets(offsets []byte, width, n int64, values *memory.Buffer) error {
	size := int64(0)
	if values != nil {
		size = int64(values.Len())
	}
	offset := func(i int64) int64 {
		if width == 4 {
			return int64(int32(binary.LittleEndian.Uint32(offsets[i*4:])))
		}
		return int64(binary.LittleEndian.Uint64(offsets[i*8:]))
	}
	prev := offset(0)
	if prev < 0 {
		return fmt.Errorf("the first offset is %d", prev)
	}
	for i := int64(1); i <= n; i++ {
		o := offset(i)
		if o < prev {
			return fmt.Errorf("offset %d (%d) is below the one before (%d)", i, o, prev)
		}
		prev = o
	}
	if prev > size {
		return fmt.Errorf("the values end at %d, past the %d bytes of values", prev, size)
	}
	return nil
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
		return func(n int64) []int64 {
			bits := int64(fw.BitWidth())
			if bits > 0 && n > math.MaxInt64/bits-1 {
				return []int64{bitmap(n), -1} // overflows: no buffer is that long
			}
			return []int64{bitmap(n), (n*bits + 7) / 8}
		}, true
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
