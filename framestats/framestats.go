// Package framestats owns the statistics block of a log frame: per column
// the null count and bounds of the values (a version 1 block is laid out
// below and in docs/format/log-segment.md). It computes the block on the
// write path, merges blocks into a segment's summary, and decodes a block
// into Columns for a reader, which the filter (predicate) judges a frame by
// to skip it without reading its columns. logstore stores the block as
// opaque bytes; engine wires the three together. No I/O.
package framestats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/fluxgate-io/fluxgate/internal/parallel"
	"github.com/fluxgate-io/fluxgate/internal/strorder"
	"github.com/fluxgate-io/fluxgate/row"
)

// The statistics block of a log frame, version 1:
//
//	version   byte    1
//	columns   uvarint the number of columns of the batch
//	per column:
//	  flags   byte    bit 0: min follows, bit 1: max follows
//	  nulls   uvarint the number of nulls
//	  min     uvarint length, then row.EncodeKey of the minimum (if flagged)
//	  max     uvarint length, then row.EncodeKey of the maximum (if flagged)
//
// Minimum and maximum are bounds under row.Compare's order: every non-null
// value of the column lies between them. They are exact except for strings
// longer than MaxString bytes: the minimum is cut to a prefix (which sorts
// no later) and the maximum to the smallest string above every string with
// its prefix. Floats order NaN above +Inf, so a column with a NaN has NaN as
// its maximum. Binary and nested columns, and columns whose values are all
// null, have neither. The block must be read with the batch's column types.
const statsVersion = 1

// MaxString caps the bytes of a string minimum or maximum.
const MaxString = 64

const (
	hasMin = 1 << iota
	hasMax
)

// ErrCorrupt is wrapped by the errors of Decode.
var ErrCorrupt = errors.New("framestats: corrupt statistics block")

// Column describes the values of one column of a batch.
type Column struct {
	NullCount int64
	// Min and Max bound the column's non-null values (row's Go values of the
	// column type); nil when unknown.
	Min, Max any
}

// Compute returns the statistics block of rec. It runs on the write
// path, so it reads each array with a typed loop and boxes one value per
// column, not per row.
func Compute(rec arrow.RecordBatch) []byte {
	dst := make([]byte, 0, 2+int(rec.NumCols())*20)
	dst = append(dst, statsVersion)
	dst = binary.AppendUvarint(dst, uint64(rec.NumCols()))
	bounds := make([][2]any, rec.NumCols())
	bound := func(i int) { bounds[i][0], bounds[i][1] = minMax(rec.Column(i)) }
	if rec.NumRows()*rec.NumCols() >= parallelStatsCells {
		parallel.For(int(rec.NumCols()), bound)
	} else {
		for i := range bounds {
			bound(i)
		}
	}
	var key []byte
	for c, arr := range rec.Columns() {
		lo, hi := bounds[c][0], bounds[c][1]
		flagsAt := len(dst)
		dst = append(dst, 0)
		dst = binary.AppendUvarint(dst, uint64(arr.NullN()))
		types := []arrow.DataType{arr.DataType()}
		for i, v := range [2]any{lo, hi} {
			if v == nil {
				continue
			}
			var err error
			if key, err = row.EncodeKey(key[:0], types, []any{v}); err != nil {
				panic(fmt.Sprintf("framestats: statistics of %s: %v", arr.DataType(), err))
			}
			dst[flagsAt] |= byte(1 << i)
			dst = binary.AppendUvarint(dst, uint64(len(key)))
			dst = append(dst, key...)
		}
	}
	return dst
}

// parallelStatsCells is the batch size (rows × columns) from which the columns'
// statistics are computed concurrently.
const parallelStatsCells = 64 << 10

// Decode decodes a statistics block written by Compute for a batch
// whose columns have the given types. An empty block (a frame written without
// statistics) gives nil: nothing is known, so every batch may match. A block
// that does not decode is an error wrapping ErrCorrupt; a reader treats
// that batch as one that may match. types may be longer than the block's
// columns (columns were added after the batch was written): only the batch's
// columns get statistics.
func Decode(b []byte, types []arrow.DataType) ([]Column, error) {
	if len(b) == 0 {
		return nil, nil
	}
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if b[0] != statsVersion {
		return nil, corrupt("version %d, want %d", b[0], statsVersion)
	}
	off := 1
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(b[off:])
		if n <= 0 {
			return 0, false
		}
		off += n
		return v, true
	}
	ncols, ok := uvarint()
	if !ok || ncols > uint64(len(types)) {
		return nil, corrupt("%d columns for %d column types", ncols, len(types))
	}
	stats := make([]Column, ncols)
	for i, t := range types[:ncols] {
		if off >= len(b) {
			return nil, corrupt("column %d: truncated", i)
		}
		flags := b[off]
		off++
		if flags&^(hasMin|hasMax) != 0 {
			return nil, corrupt("column %d: flags %#x", i, flags)
		}
		nulls, ok := uvarint()
		if !ok || nulls > math.MaxInt64 {
			return nil, corrupt("column %d: bad null count", i)
		}
		stats[i].NullCount = int64(nulls)
		for j, v := range []*any{&stats[i].Min, &stats[i].Max} {
			if flags&(1<<j) == 0 {
				continue
			}
			n, ok := uvarint()
			if !ok || n > uint64(len(b)-off) {
				return nil, corrupt("column %d: bad bound length", i)
			}
			vals, err := row.DecodeKey(b[off:off+int(n)], []arrow.DataType{t})
			if err != nil {
				return nil, corrupt("column %d: %v", i, err)
			}
			off += int(n)
			*v = vals[0]
		}
		if s := stats[i]; s.Min != nil && s.Max != nil && row.Compare(t, s.Min, s.Max) > 0 {
			return nil, corrupt("column %d: minimum above maximum", i)
		}
	}
	if off != len(b) {
		return nil, corrupt("%d trailing bytes", len(b)-off)
	}
	return stats, nil
}

// View returns the statistics of a frame of rows rows as a reader of
// columns of the given types sees them, behind lead columns the block does
// not cover (a read view's system columns: never null, bounds not
// recorded). Columns added after the frame was written are NULL in all its
// rows. nil when the frame has no statistics or they do not decode: nothing
// is known, so the frame may match.
func View(block []byte, types []arrow.DataType, rows, lead int) []Column {
	table, err := Decode(block, types)
	if err != nil || table == nil {
		return nil
	}
	view := make([]Column, lead, lead+len(types))
	view = append(view, table...)
	for len(view) < lead+len(types) {
		view = append(view, Column{NullCount: int64(rows)})
	}
	return view
}

// minMax returns bounds of arr's non-null values, nil where there are none.
func minMax(arr arrow.Array) (lo, hi any) {
	n := arr.Len()
	if arr.NullN() == n {
		return nil, nil
	}
	// valid is nil when every value is valid; the typed loops then skip the
	// bitmap.
	var valid []byte
	if arr.NullN() > 0 {
		valid = arr.NullBitmapBytes()
	}
	off := arr.Data().Offset()
	switch a := arr.(type) {
	case *array.Boolean:
		return minMaxBool(a, valid != nil)
	case *array.Int8:
		return box(minMaxInt(a.Int8Values(), valid, off))
	case *array.Int16:
		return box(minMaxInt(a.Int16Values(), valid, off))
	case *array.Int32:
		return box(minMaxInt(a.Int32Values(), valid, off))
	case *array.Int64:
		return box(minMaxInt(a.Int64Values(), valid, off))
	case *array.Date32:
		return box(minMaxInt(a.Date32Values(), valid, off))
	case *array.Time32:
		return box(minMaxInt(a.Time32Values(), valid, off))
	case *array.Time64:
		return box(minMaxInt(a.Time64Values(), valid, off))
	case *array.Timestamp:
		return box(minMaxInt(a.TimestampValues(), valid, off))
	case *array.Float32:
		return box(minMaxFloat(a.Float32Values(), valid, off))
	case *array.Float64:
		return box(minMaxFloat(a.Float64Values(), valid, off))
	case *array.Decimal128:
		return box(minMaxDecimal(a.Values(), valid, off))
	case *array.String:
		return stringBounds(minMaxString(a.ValueOffsets(), a.Data().Buffers()[2].Bytes(), valid, off))
	case *array.LargeString:
		return stringBounds(minMaxString(a.ValueOffsets(), a.Data().Buffers()[2].Bytes(), valid, off))
	}
	return nil, nil
}

func box[T any](lo, hi T) (any, any) { return lo, hi }

// validRuns calls fn for each run [i, j) of valid values among n values
// whose validity bitmap valid starts at bit off; nil valid means all are
// valid. Runs are found a byte of the bitmap at a time where it can, so that
// the loops in fn run over long stretches without a branch per value.
func validRuns(valid []byte, off, n int, fn func(i, j int)) {
	if valid == nil {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	start := -1
	for i := 0; i < n; {
		bit := off + i
		if bit%8 == 0 && i+8 <= n {
			switch valid[bit/8] {
			case 0xff:
				if start < 0 {
					start = i
				}
				i += 8
				continue
			case 0:
				if start >= 0 {
					fn(start, i)
					start = -1
				}
				i += 8
				continue
			}
		}
		if bitutil.BitIsSet(valid, bit) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			fn(start, i)
			start = -1
		}
		i++
	}
	if start >= 0 {
		fn(start, n)
	}
}

// The loops below keep their running bounds in locals: bounds captured by
// the closure would live in memory, a load and a store per value.

func minMaxInt[T ~int8 | ~int16 | ~int32 | ~int64](vals []T, valid []byte, off int) (lo, hi T) {
	first := true
	validRuns(valid, off, len(vals), func(i, j int) {
		run := vals[i:j]
		if first {
			lo, hi, first = run[0], run[0], false
		}
		// Two chains of conditional moves, not one, run in parallel.
		l0, h0, l1, h1 := lo, hi, lo, hi
		k := 0
		for ; k+1 < len(run); k += 2 {
			l0, h0 = min(l0, run[k]), max(h0, run[k])
			l1, h1 = min(l1, run[k+1]), max(h1, run[k+1])
		}
		if k < len(run) {
			l0, h0 = min(l0, run[k]), max(h0, run[k])
		}
		lo, hi = min(l0, l1), max(h0, h1)
	})
	return lo, hi
}

// minMaxFloat orders as row.Compare does: NaN above +Inf, so a column with
// a NaN has NaN as its maximum. Comparisons with NaN are false, so the loop
// passes over NaNs and counts them.
func minMaxFloat[T float32 | float64](vals []T, valid []byte, off int) (lo, hi T) {
	lo, hi = T(math.Inf(1)), T(math.Inf(-1))
	values, nans := 0, 0
	validRuns(valid, off, len(vals), func(i, j int) {
		l, h, n := lo, hi, 0
		for _, v := range vals[i:j] {
			if v < l {
				l = v
			}
			if v > h {
				h = v
			}
			if v != v {
				n++
			}
		}
		lo, hi, values, nans = l, h, values+j-i, nans+n
	})
	switch nan := T(math.NaN()); {
	case nans == values:
		return nan, nan
	case nans > 0:
		return lo, nan
	}
	return lo, hi
}

func minMaxDecimal(vals []decimal128.Num, valid []byte, off int) (lo, hi decimal128.Num) {
	first := true
	validRuns(valid, off, len(vals), func(i, j int) {
		run := vals[i:j]
		if first {
			lo, hi, first = run[0], run[0], false
		}
		l, h := lo, hi
		for _, v := range run {
			if v.Less(l) {
				l = v
			} else if v.Greater(h) {
				h = v
			}
		}
		lo, hi = l, h
	})
	return lo, hi
}

// minMaxString finds the least and greatest strings of an array with the
// given value offsets and data. Most values lie strictly between the two, or
// equal one of them (low-cardinality columns), and the first 8 bytes (as a
// big-endian integer, zero-padded) mostly show which without comparing
// strings.
func minMaxString[O int32 | int64](offs []O, data []byte, valid []byte, off int) (lo, hi string) {
	first := true
	var loKey, hiKey uint64
	validRuns(valid, off, len(offs)-1, func(i, j int) {
		if first {
			lo = strorder.View(data[offs[i]:offs[i+1]])
			hi, loKey, hiKey, first = lo, strorder.PrefixKey(lo), strorder.PrefixKey(lo), false
		}
		l, h, lk, hk := lo, hi, loKey, hiKey
		for k := i; k < j; k++ {
			start, end := int(offs[k]), int(offs[k+1])
			key := prefixKeyAt(data, start, end)
			switch {
			case lk < key && key < hk:
			case key < lk || key == lk && lessSamePrefix(data[start:end], l):
				l, lk = strorder.View(data[start:end]), key
			case key > hk || key == hk && lessSamePrefix(h, data[start:end]):
				h, hk = strorder.View(data[start:end]), key
			}
		}
		lo, hi, loKey, hiKey = l, h, lk, hk
	})
	return lo, hi
}

// lessSamePrefix reports a < b for strings of equal prefix keys: two of at
// most 8 bytes then differ only in trailing zero bytes, so the shorter is
// less.
func lessSamePrefix[A, B string | []byte](a A, b B) bool {
	if len(a) <= 8 && len(b) <= 8 {
		return len(a) < len(b)
	}
	return string(a) < string(b)
}

// prefixKeyAt is strorder.PrefixKey(data[start:end]), reading 8 bytes at once where
// data has them and masking off those past end.
func prefixKeyAt(data []byte, start, end int) uint64 {
	if start+8 > len(data) {
		return strorder.PrefixKey(data[start:end])
	}
	key := binary.BigEndian.Uint64(data[start : start+8])
	if n := end - start; n < 8 {
		key &^= 1<<(8*(8-n)) - 1
	}
	return key
}

// stringBounds caps lo and hi (which alias Arrow buffers) at MaxString
// bytes and copies them.
func stringBounds(lo, hi string) (any, any) {
	if len(lo) > MaxString {
		cut := MaxString
		for cut > 0 && !utf8.RuneStart(lo[cut]) {
			cut--
		}
		lo = lo[:cut]
	}
	var max any
	if len(hi) <= MaxString {
		max = strings.Clone(hi)
	} else if s, ok := strorder.Successor(hi[:MaxString]); ok {
		max = s
	}
	return strings.Clone(lo), max
}

func minMaxBool(a *array.Boolean, hasNulls bool) (lo, hi any) {
	var hasTrue, hasFalse bool
	if !hasNulls {
		n := a.Len()
		set := bitutil.CountSetBits(a.Data().Buffers()[1].Bytes(), a.Data().Offset(), n)
		hasTrue, hasFalse = set > 0, set < n
	} else {
		for i := range a.Len() {
			if a.IsValid(i) {
				if a.Value(i) {
					hasTrue = true
				} else {
					hasFalse = true
				}
			}
		}
	}
	return !hasFalse, hasTrue
}
