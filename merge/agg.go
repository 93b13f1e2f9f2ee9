package merge

import (
	"fmt"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/row"
)

// aggregator is one column's aggregate function (Fluss's aggregation merge
// engine: AggregateRowMerger and its aggregate/ functions).
type aggregator struct {
	name     string
	nullWins bool                           // last_value: a NULL input overwrites the accumulator
	fn       aggFn                          // called with both values non-NULL
	check    func(bm *bitmaps, v any) error // validates an input stored as it is; nil: none needed
}

// aggFn combines the accumulator (the stored value) with the input; both are
// non-NULL. bm is scratch space for the bitmap functions.
type aggFn func(bm *bitmaps, acc, in any) (any, error)

// apply is the function with Fluss's NULL rule: a NULL input leaves the
// accumulator (except for last_value), a NULL accumulator takes the input.
func (a *aggregator) apply(bm *bitmaps, acc, in any) (any, error) {
	switch {
	case in == nil:
		if a.nullWins {
			return nil, nil
		}
		return acc, nil
	case acc == nil:
		if a.check != nil {
			if err := a.check(bm, in); err != nil {
				return nil, err
			}
		}
		return in, nil
	}
	return a.fn(bm, acc, in)
}

// newAggregator resolves an aggregate function for a column type. The catalog
// has validated the pair; an error here means a corrupt definition.
func newAggregator(name string, t arrow.DataType, delimiter string) (*aggregator, error) {
	a := &aggregator{name: name}
	switch name {
	case "sum":
		a.fn = arith(t, false)
	case "product":
		a.fn = arith(t, true)
	case "max":
		if !ordered(t) {
			break
		}
		a.fn = func(_ *bitmaps, acc, in any) (any, error) {
			if row.Compare(t, in, acc) > 0 {
				return in, nil
			}
			return acc, nil
		}
	case "min":
		if !ordered(t) {
			break
		}
		a.fn = func(_ *bitmaps, acc, in any) (any, error) {
			if row.Compare(t, in, acc) < 0 {
				return in, nil
			}
			return acc, nil
		}
	case "last_value":
		a.nullWins = true
		a.fn = takeInput
	case "last_value_ignore_nulls":
		a.fn = takeInput
	case "first_value", "first_value_ignore_nulls":
		// Both keep the accumulator once it is non-NULL: Fluss's first_value has
		// no "initialized" flag, so a NULL stored first is replaced by the next
		// non-NULL input (FieldFirstValueAgg; Fluss's documentation says otherwise,
		// and the code wins).
		a.fn = keepAccumulator
	case "listagg", "string_agg":
		if t.ID() == arrow.STRING {
			a.fn = listagg(delimiter)
		}
	case "bool_and":
		if t.ID() == arrow.BOOL {
			a.fn = boolAnd
		}
	case "bool_or":
		if t.ID() == arrow.BOOL {
			a.fn = boolOr
		}
	case "rbm32":
		if t.ID() == arrow.BINARY {
			a.fn, a.check = orBitmap32, checkBitmap32
		}
	case "rbm64":
		if t.ID() == arrow.BINARY {
			a.fn, a.check = orBitmap64, checkBitmap64
		}
	default:
		return nil, fmt.Errorf("unknown aggregate function %q", name)
	}
	if a.fn == nil {
		return nil, fmt.Errorf("aggregate function %s does not accept type %s", name, t)
	}
	return a, nil
}

// ordered reports whether row.Compare orders values of t.
func ordered(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.MAP, arrow.STRUCT:
		return false
	}
	return true
}

func takeInput(_ *bitmaps, _, in any) (any, error)        { return in, nil }
func keepAccumulator(_ *bitmaps, acc, _ any) (any, error) { return acc, nil }

type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~float32 | ~float64
}

// arith is sum or product for a numeric type. Integers wrap around at the
// column's width (Java's arithmetic, narrowed for TINYINT and SMALLINT);
// floating point is IEEE-754.
func arith(t arrow.DataType, product bool) aggFn {
	switch t.ID() {
	case arrow.INT8:
		return pick[int8](product)
	case arrow.INT16:
		return pick[int16](product)
	case arrow.INT32:
		return pick[int32](product)
	case arrow.INT64:
		return pick[int64](product)
	case arrow.FLOAT32:
		return pick[float32](product)
	case arrow.FLOAT64:
		return pick[float64](product)
	case arrow.DECIMAL128:
		d := t.(*arrow.Decimal128Type)
		if product {
			return decimalProduct(d.Precision, d.Scale)
		}
		return decimalSum(d.Precision)
	}
	return nil
}

func pick[T number](product bool) aggFn {
	if product {
		return mul[T]
	}
	return add[T]
}

func add[T number](_ *bitmaps, acc, in any) (any, error) {
	x, ok1 := acc.(T)
	y, ok2 := in.(T)
	if !ok1 || !ok2 {
		return nil, wrongType[T](acc, in)
	}
	return x + y, nil
}

func mul[T number](_ *bitmaps, acc, in any) (any, error) {
	x, ok1 := acc.(T)
	y, ok2 := in.(T)
	if !ok1 || !ok2 {
		return nil, wrongType[T](acc, in)
	}
	return x * y, nil
}

// decimalSum adds two decimals of the column's precision and scale; a sum
// that does not fit the precision is NULL (Fluss's Decimal.fromBigDecimal),
// and the next non-NULL input starts over from it.
func decimalSum(prec int32) aggFn {
	return func(_ *bitmaps, acc, in any) (any, error) {
		x, ok1 := acc.(decimal128.Num)
		y, ok2 := in.(decimal128.Num)
		if !ok1 || !ok2 {
			return nil, wrongType[decimal128.Num](acc, in)
		}
		s := x.Add(y)
		if xs := x.Sign() < 0; xs == (y.Sign() < 0) && xs != (s.Sign() < 0) {
			return nil, nil // beyond 128 bits, so beyond any precision
		}
		if !s.FitsInPrecision(prec) {
			return nil, nil
		}
		return s, nil
	}
}

// decimalProduct multiplies two decimals and rounds the product HALF_UP (half
// away from zero) to the column's scale; a product that does not fit the
// precision is NULL.
func decimalProduct(prec, scale int32) aggFn {
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	return func(_ *bitmaps, acc, in any) (any, error) {
		x, ok1 := acc.(decimal128.Num)
		y, ok2 := in.(decimal128.Num)
		if !ok1 || !ok2 {
			return nil, wrongType[decimal128.Num](acc, in)
		}
		p := new(big.Int).Mul(x.BigInt(), y.BigInt()) // at scale 2*scale
		if scale > 0 {
			r := new(big.Int)
			p.QuoRem(p, unit, r)
			neg := r.Sign() < 0
			if r.Abs(r).Lsh(r, 1).Cmp(unit) >= 0 {
				if neg {
					p.Sub(p, big.NewInt(1))
				} else {
					p.Add(p, big.NewInt(1))
				}
			}
		}
		if p.BitLen() > 126 {
			return nil, nil
		}
		n := decimal128.FromBigInt(p)
		if !n.FitsInPrecision(prec) {
			return nil, nil
		}
		return n, nil
	}
}

func listagg(delimiter string) aggFn {
	return func(_ *bitmaps, acc, in any) (any, error) {
		x, ok1 := acc.(string)
		y, ok2 := in.(string)
		if !ok1 || !ok2 {
			return nil, wrongType[string](acc, in)
		}
		return x + delimiter + y, nil
	}
}

func boolAnd(_ *bitmaps, acc, in any) (any, error) {
	x, ok1 := acc.(bool)
	y, ok2 := in.(bool)
	if !ok1 || !ok2 {
		return nil, wrongType[bool](acc, in)
	}
	return x && y, nil
}

func boolOr(_ *bitmaps, acc, in any) (any, error) {
	x, ok1 := acc.(bool)
	y, ok2 := in.(bool)
	if !ok1 || !ok2 {
		return nil, wrongType[bool](acc, in)
	}
	return x || y, nil
}

// wrongType reports values of a Go type the column cannot hold: a bug in the
// caller's row decoding.
func wrongType[T any](acc, in any) error {
	var want T
	return errs.New(errs.Internal, "merge: want two %T values, got %T and %T", want, acc, in)
}
