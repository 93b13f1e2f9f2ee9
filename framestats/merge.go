package framestats

import (
	"bytes"
	"encoding/binary"
)

// Merge returns the statistics block of two batches taken together (of
// one schema): null counts add up, the minimum is the smaller minimum and the
// maximum the larger maximum. The bounds are compared as their encodings,
// which order as the values do, so no types are needed. A bound one side lacks
// is lacking in the result. Blocks that do not fit together (another version
// or column count, or corrupt) give nil: unknown. A log segment keeps the
// merge of its frames' blocks, so a scan can pass over the whole segment.
func Merge(a, b []byte) []byte {
	ca, okA := splitStats(a)
	cb, okB := splitStats(b)
	if !okA || !okB || len(ca) != len(cb) {
		return nil
	}
	out := []byte{statsVersion}
	out = binary.AppendUvarint(out, uint64(len(ca)))
	for i := range ca {
		x, y := ca[i], cb[i]
		flags := byte(0)
		var lo, hi []byte
		if x.min != nil && y.min != nil {
			flags |= hasMin
			lo = x.min
			if bytes.Compare(y.min, lo) < 0 {
				lo = y.min
			}
		}
		if x.max != nil && y.max != nil {
			flags |= hasMax
			hi = x.max
			if bytes.Compare(y.max, hi) > 0 {
				hi = y.max
			}
		}
		out = append(out, flags)
		out = binary.AppendUvarint(out, x.nulls+y.nulls)
		if flags&hasMin != 0 {
			out = append(binary.AppendUvarint(out, uint64(len(lo))), lo...)
		}
		if flags&hasMax != 0 {
			out = append(binary.AppendUvarint(out, uint64(len(hi))), hi...)
		}
	}
	return out
}

// rawColumn is one column of a statistics block, bounds still encoded.
type rawColumn struct {
	nulls    uint64
	min, max []byte // nil when absent
}

// splitStats cuts a statistics block into its columns without decoding the
// bounds.
func splitStats(b []byte) ([]rawColumn, bool) {
	if len(b) == 0 || b[0] != statsVersion {
		return nil, false
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, false
	}
	b = b[k:]
	cols := make([]rawColumn, n)
	for i := range cols {
		if len(b) == 0 {
			return nil, false
		}
		flags := b[0]
		b = b[1:]
		nulls, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, false
		}
		b = b[k:]
		cols[i].nulls = nulls
		for _, bound := range []struct {
			flag byte
			dst  *[]byte
		}{{hasMin, &cols[i].min}, {hasMax, &cols[i].max}} {
			if flags&bound.flag == 0 {
				continue
			}
			l, k := binary.Uvarint(b)
			if k <= 0 || l > uint64(len(b)-k) {
				return nil, false
			}
			*bound.dst = b[k : k+int(l)]
			b = b[k+int(l):]
		}
	}
	return cols, len(b) == 0
}
