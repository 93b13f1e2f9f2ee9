package predicate

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/fluxgate-io/fluxgate/framestats"
	"github.com/fluxgate-io/fluxgate/internal/strorder"
	"github.com/fluxgate-io/fluxgate/row"
)

// MayMatch reports whether some row of a batch of rows rows, whose columns
// have the statistics stats, may match: it is false only when the statistics
// prove that no row does. stats[i] describes schema column i; a nil or short
// slice, or a bound of another Go type than the column's, leaves the rest
// unknown.
//
// Each node is judged by the set of results (true, false, NULL) that its rows
// may give, not by a yes or no, so that not and the NULLs of SQL's
// three-valued logic stay sound: NOT (x > 5) over a column whose values are
// all above 5 cannot match, and neither can x > 5 over a column of NULLs.
func (b *Bound) MayMatch(rows int64, stats []framestats.Column) bool {
	if rows == 0 {
		return false
	}
	return b.root.outcomes(rows, stats)&isTrue != 0
}

// MatchesAll reports whether every row of a batch of rows rows, whose
// columns have the statistics stats, matches: the statistics prove that no
// row gives false or NULL. A scan then sends the batch without filtering it.
func (b *Bound) MatchesAll(rows int64, stats []framestats.Column) bool {
	return rows > 0 && b.root.outcomes(rows, stats) == isTrue
}

// outcomes is a set of the results a predicate may give for the rows of a
// batch.
type outcomes uint8

const (
	isTrue outcomes = 1 << iota
	isFalse
	isNull
	anyOutcome = isTrue | isFalse | isNull
)

// negate maps each result to its negation: NOT NULL is NULL.
func (o outcomes) negate() outcomes {
	return o&isNull | (o&isTrue)<<1 | (o&isFalse)>>1
}

// kleene returns the results of x AND y (or x OR y) for x from a and y from
// b.
func kleene(or bool, a, b outcomes) outcomes {
	var r outcomes
	for x := isTrue; x <= isNull; x <<= 1 {
		for y := isTrue; y <= isNull; y <<= 1 {
			if a&x == 0 || b&y == 0 {
				continue
			}
			// The dominant value wins: false for AND, true for OR; then NULL.
			dominant := isFalse
			if or {
				dominant = isTrue
			}
			switch {
			case x == dominant || y == dominant:
				r |= dominant
			case x == isNull || y == isNull:
				r |= isNull
			default:
				r |= x
			}
		}
	}
	return r
}

func (n *node) outcomes(rows int64, stats []framestats.Column) outcomes {
	switch n.op {
	case opAnd, opOr:
		acc := n.kids[0].outcomes(rows, stats)
		for _, k := range n.kids[1:] {
			acc = kleene(n.op == opOr, acc, k.outcomes(rows, stats))
		}
		return acc
	case opNot:
		return n.kids[0].outcomes(rows, stats).negate()
	}

	if n.col >= len(stats) || rows < 0 || stats[n.col].NullCount < 0 || stats[n.col].NullCount > rows {
		if n.op == opIsNull || n.op == opIsNotNull {
			return isTrue | isFalse
		}
		return anyOutcome
	}
	st := stats[n.col]
	nulls, values := st.NullCount > 0, st.NullCount < rows
	var o outcomes
	switch n.op {
	case opIsNull, opIsNotNull:
		if nulls {
			o |= isTrue
		}
		if values {
			o |= isFalse
		}
		if n.op == opIsNotNull {
			o = o.negate()
		}
		return o
	}
	if nulls {
		o |= isNull
	}
	if values {
		lo, hi := st.Min, st.Max
		if !fits(n.typ, lo) {
			lo = nil
		}
		if !fits(n.typ, hi) {
			hi = nil
		}
		o |= n.valueOutcomes(bounds{n.typ, lo, hi})
	}
	return o
}

// bounds are the bounds of a column's non-null values; nil is no bound.
type bounds struct {
	typ    arrow.DataType
	lo, hi any
}

func (b bounds) mayBeBelow(v any) bool   { return b.lo == nil || row.Compare(b.typ, b.lo, v) < 0 }
func (b bounds) mayBeAtMost(v any) bool  { return b.lo == nil || row.Compare(b.typ, b.lo, v) <= 0 }
func (b bounds) mayBeAbove(v any) bool   { return b.hi == nil || row.Compare(b.typ, b.hi, v) > 0 }
func (b bounds) mayBeAtLeast(v any) bool { return b.hi == nil || row.Compare(b.typ, b.hi, v) >= 0 }
func (b bounds) mayEqual(v any) bool     { return b.mayBeAtMost(v) && b.mayBeAtLeast(v) }

// allEqual reports whether every value is v.
func (b bounds) allEqual(v any) bool {
	return b.lo != nil && b.hi != nil && row.Compare(b.typ, b.lo, v) == 0 && row.Compare(b.typ, b.hi, v) == 0
}

// valueOutcomes returns the results that n, a comparison, in or starts_with,
// may give for non-null values within b.
func (n *node) valueOutcomes(b bounds) outcomes {
	var mayTrue, mayFalse bool
	switch n.op {
	case opEq, opNe:
		v := n.vals[0]
		mayTrue, mayFalse = b.mayEqual(v), !b.allEqual(v)
	case opLt:
		mayTrue, mayFalse = b.mayBeBelow(n.vals[0]), b.mayBeAtLeast(n.vals[0])
	case opLe:
		mayTrue, mayFalse = b.mayBeAtMost(n.vals[0]), b.mayBeAbove(n.vals[0])
	case opGt:
		mayTrue, mayFalse = b.mayBeAbove(n.vals[0]), b.mayBeAtMost(n.vals[0])
	case opGe:
		mayTrue, mayFalse = b.mayBeAtLeast(n.vals[0]), b.mayBeBelow(n.vals[0])
	case opIn, opNotIn:
		mayFalse = true
		for _, v := range n.vals {
			mayTrue = mayTrue || b.mayEqual(v)
			mayFalse = mayFalse && !b.allEqual(v)
		}
	case opStartsWith:
		// The strings that start with p are those in [p, strorder.Successor(p)), and
		// every string between two of them starts with p too.
		p := n.vals[0].(string)
		succ, bounded := strorder.Successor(p)
		mayTrue = b.mayBeAtLeast(p) && (!bounded || b.mayBeBelow(succ))
		mayFalse = b.lo == nil || b.hi == nil || !strings.HasPrefix(b.lo.(string), p) || !strings.HasPrefix(b.hi.(string), p)
	}
	if n.op == opNe || n.op == opNotIn {
		mayTrue, mayFalse = mayFalse, mayTrue
	}
	var o outcomes
	if mayTrue {
		o |= isTrue
	}
	if mayFalse {
		o |= isFalse
	}
	return o
}

// fits reports whether v is a value of type t as row holds it.
func fits(t arrow.DataType, v any) bool {
	var ok bool
	switch t.ID() {
	case arrow.BOOL:
		_, ok = v.(bool)
	case arrow.INT8:
		_, ok = v.(int8)
	case arrow.INT16:
		_, ok = v.(int16)
	case arrow.INT32:
		_, ok = v.(int32)
	case arrow.INT64:
		_, ok = v.(int64)
	case arrow.FLOAT32:
		_, ok = v.(float32)
	case arrow.FLOAT64:
		_, ok = v.(float64)
	case arrow.DECIMAL128:
		_, ok = v.(decimal128.Num)
	case arrow.STRING, arrow.LARGE_STRING:
		_, ok = v.(string)
	case arrow.BINARY, arrow.LARGE_BINARY:
		_, ok = v.([]byte)
	case arrow.DATE32:
		_, ok = v.(arrow.Date32)
	case arrow.TIME32:
		_, ok = v.(arrow.Time32)
	case arrow.TIME64:
		_, ok = v.(arrow.Time64)
	case arrow.TIMESTAMP:
		_, ok = v.(arrow.Timestamp)
	}
	return ok
}
