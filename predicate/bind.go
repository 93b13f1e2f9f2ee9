package predicate

import (
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/strorder"
	"github.com/fluxgate-io/fluxgate/row"
)

// Bound is a predicate bound to a schema: columns resolved to indexes and
// literals coerced to their columns' types. It is immutable and safe for
// concurrent use.
type Bound struct {
	root *node
	cols []int
}

// node is one bound predicate node.
type node struct {
	op   op
	kids []*node

	// Leaves only.
	col  int
	name string
	typ  arrow.DataType
	vals []any // coerced literals (row's Go values); starts_with: the prefix

	// For Filter, made once: the literal of a comparison as a scalar, and the
	// list of in and not_in as an array. Both live in Go memory and are only
	// read, so every Filter call can share them.
	lit      scalar.Scalar
	set      arrow.Array
	decimals *memberSet[decimal128.Num] // in lists of decimals
	strs     *memberSet[string]         // in lists of strings and binaries
}

// Bind binds e to schema. Every error is errs.InvalidArgument and names the node and
// the column: an unknown column, a literal that does not coerce to its
// column's type (row.Coerce), starts_with on a column that is not a string,
// or a comparison on a type without an order (nested types, for instance).
func Bind(e *Expr, schema *arrow.Schema) (*Bound, error) {
	b := &Bound{}
	root, err := b.bind(e, schema)
	if err != nil {
		return nil, err
	}
	b.root = root
	slices.Sort(b.cols)
	b.cols = slices.Compact(b.cols)
	return b, nil
}

// Columns returns the indexes of the schema columns that the predicate
// reads, ascending.
func (b *Bound) Columns() []int { return slices.Clone(b.cols) }

// String returns the predicate in a readable, SQL-like form, for logs.
func (b *Bound) String() string {
	var sb strings.Builder
	b.root.format(&sb)
	return sb.String()
}

func (b *Bound) bind(e *Expr, schema *arrow.Schema) (*node, error) {
	n := &node{op: e.op}
	if len(e.kids) > 0 {
		n.kids = make([]*node, len(e.kids))
		for i, k := range e.kids {
			var err error
			if n.kids[i], err = b.bind(k, schema); err != nil {
				return nil, err
			}
		}
		return n, nil
	}

	idx := schema.FieldIndices(e.col)
	switch len(idx) {
	case 0:
		names := make([]string, schema.NumFields())
		for i, f := range schema.Fields() {
			names[i] = f.Name
		}
		return nil, invalid(e.path, "unknown column %s (columns: %s)", errs.Quote(e.col), strings.Join(names, ", "))
	case 1:
	default:
		return nil, invalid(e.path, "column name %s is ambiguous: the schema has it %d times", errs.Quote(e.col), len(idx))
	}
	n.col, n.name, n.typ = idx[0], e.col, schema.Field(idx[0]).Type
	b.cols = append(b.cols, n.col)

	switch {
	case n.op == opIsNull || n.op == opIsNotNull:
		return n, nil
	case n.op == opStartsWith:
		if id := n.typ.ID(); id != arrow.STRING && id != arrow.LARGE_STRING {
			return nil, invalid(e.path, "starts_with needs a STRING column; %s is %s", errs.Quote(e.col), n.typ)
		}
		n.vals = e.vals
		return n, nil
	case !ordered(n.typ):
		return nil, invalid(e.path, "column %s of type %s cannot be compared", errs.Quote(e.col), n.typ)
	}

	n.vals = make([]any, len(e.vals))
	for i, lit := range e.vals {
		v, err := row.Coerce(n.typ, lit)
		switch {
		case err != nil && len(e.vals) > 1:
			return nil, errs.New(errs.InvalidArgument, "%s: column %s: value %d of the list: %w", e.path, errs.Quote(e.col), i, err)
		case err != nil:
			return nil, errs.New(errs.InvalidArgument, "%s: column %s: %w", e.path, errs.Quote(e.col), err)
		}
		n.vals[i] = v
	}
	switch {
	case n.op == opIn || n.op == opNotIn:
		// filterer.in does without Arrow's is_in for some types.
		switch n.typ.ID() {
		case arrow.BOOL:
		case arrow.DECIMAL128:
			decs := make([]decimal128.Num, len(n.vals))
			for i, v := range n.vals {
				decs[i] = v.(decimal128.Num)
			}
			n.decimals = newMemberSet(decs, decimal128.Num.LowBits)
		case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
			strs := make([]string, len(n.vals))
			for i, v := range n.vals {
				if b, ok := v.([]byte); ok {
					strs[i] = string(b)
				} else {
					strs[i] = v.(string)
				}
			}
			n.strs = newMemberSet(strs, strorder.PrefixKey[string])
		default:
			n.set = valueSet(n.typ, n.vals)
		}
	default:
		n.lit = literalScalar(n.typ, n.vals[0])
	}
	return n, nil
}

// ordered reports whether columns of type t take comparisons: the scalar
// types that row.Compare orders and Arrow's compute kernels compare. Not
// fixed_size_binary, which fluxgate's tables do not use and whose comparison
// kernels give wrong answers in arrow-go v18.8.0.
func ordered(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL128, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY,
		arrow.DATE32, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP:
		return true
	}
	return false
}

// literalScalar returns v, a value of type t, as an Arrow scalar whose
// buffers live in Go memory.
func literalScalar(t arrow.DataType, v any) scalar.Scalar {
	switch v := v.(type) {
	case bool:
		return scalar.NewBooleanScalar(v)
	case int8:
		return scalar.NewInt8Scalar(v)
	case int16:
		return scalar.NewInt16Scalar(v)
	case int32:
		return scalar.NewInt32Scalar(v)
	case int64:
		return scalar.NewInt64Scalar(v)
	case float32:
		return scalar.NewFloat32Scalar(v)
	case float64:
		return scalar.NewFloat64Scalar(v)
	case decimal128.Num:
		return scalar.NewDecimal128Scalar(v, t)
	case arrow.Date32:
		return scalar.NewDate32Scalar(v)
	case arrow.Time32:
		return scalar.NewTime32Scalar(v, t)
	case arrow.Time64:
		return scalar.NewTime64Scalar(v, t)
	case arrow.Timestamp:
		return scalar.NewTimestampScalar(v, t)
	case string:
		if t.ID() == arrow.LARGE_STRING {
			return scalar.NewLargeStringScalar(v)
		}
		return scalar.NewStringScalar(v)
	case []byte:
		buf := memory.NewBufferBytes(v)
		if t.ID() == arrow.LARGE_BINARY {
			return scalar.NewLargeBinaryScalar(buf)
		}
		return scalar.NewBinaryScalar(buf, t)
	}
	panic(fmt.Sprintf("predicate: no scalar for %T of type %s", v, t))
}

// valueSet returns the literals of an in list as an array of type t in Go
// memory. Float lists hold both zeros when they hold one: is_in hashes the
// bits, but -0 equals 0.
func valueSet(t arrow.DataType, vals []any) arrow.Array {
	bld := array.NewBuilder(memory.NewGoAllocator(), t)
	defer bld.Release()
	for _, v := range vals {
		row.Append(bld, v)
		switch f := v.(type) {
		case float32:
			if f == 0 {
				row.Append(bld, -f)
			}
		case float64:
			if f == 0 {
				row.Append(bld, -f)
			}
		}
	}
	return bld.NewArray()
}

var sqlOps = [...]string{opEq: "=", opNe: "<>", opLt: "<", opLe: "<=", opGt: ">", opGe: ">="}

func (n *node) format(sb *strings.Builder) {
	switch n.op {
	case opAnd, opOr:
		sb.WriteByte('(')
		for i, k := range n.kids {
			if i > 0 {
				sb.WriteString(" " + strings.ToUpper(n.op.String()) + " ")
			}
			k.format(sb)
		}
		sb.WriteByte(')')
	case opNot:
		sb.WriteString("NOT ")
		n.kids[0].format(sb)
	case opIsNull:
		sb.WriteString(n.name + " IS NULL")
	case opIsNotNull:
		sb.WriteString(n.name + " IS NOT NULL")
	case opStartsWith:
		fmt.Fprintf(sb, "starts_with(%s, %s)", n.name, strconv.Quote(n.vals[0].(string)))
	case opIn, opNotIn:
		sb.WriteString(n.name)
		if n.op == opNotIn {
			sb.WriteString(" NOT")
		}
		sb.WriteString(" IN (")
		for i, v := range n.vals {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(formatLiteral(n.typ, v))
		}
		sb.WriteByte(')')
	default:
		fmt.Fprintf(sb, "%s %s %s", n.name, sqlOps[n.op], formatLiteral(n.typ, n.vals[0]))
	}
}

// formatLiteral writes v, a value of type t, as a literal for logs.
func formatLiteral(t arrow.DataType, v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case []byte:
		return "x'" + hex.EncodeToString(v) + "'"
	case decimal128.Num:
		return v.ToString(t.(*arrow.Decimal128Type).Scale)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return "'" + strconv.FormatFloat(v, 'g', -1, 64) + "'"
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	case arrow.Date32:
		return "DATE '" + v.FormattedString() + "'"
	case arrow.Time32:
		return "TIME '" + v.FormattedString(t.(*arrow.Time32Type).Unit) + "'"
	case arrow.Time64:
		return "TIME '" + v.FormattedString(t.(*arrow.Time64Type).Unit) + "'"
	case arrow.Timestamp:
		tt := t.(*arrow.TimestampType)
		s := v.ToTime(tt.Unit).UTC().Format("2006-01-02 15:04:05.999999999")
		if tt.TimeZone != "" {
			return "TIMESTAMP '" + s + "Z'"
		}
		return "TIMESTAMP '" + s + "'"
	}
	return fmt.Sprint(v)
}

// Term is a bound predicate node as plain data, for translating the
// predicate into another reader's filter (the lake's scan planning).
type Term struct {
	Op     string // as in PROTOCOL.md §4.4: and, or, not, eq, ..., starts_with
	Terms  []Term // and, or, not
	Column string
	Type   arrow.DataType
	Values []any // the coerced literals as row's Go values; starts_with: the prefix
}

// Term returns the predicate as a tree of Terms.
func (b *Bound) Term() Term { return b.root.term() }

func (n *node) term() Term {
	t := Term{Op: n.op.String(), Column: n.name, Type: n.typ, Values: n.vals}
	for _, k := range n.kids {
		t.Terms = append(t.Terms, k.term())
	}
	return t
}
