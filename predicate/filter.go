package predicate

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/fluxgate-io/fluxgate/internal/strorder"
)

// Filter evaluates the predicate over rows rows and returns the selection
// mask: true where the predicate is true, false where it is false or NULL.
// The mask has no nulls; the caller releases it. col(i) returns the array of
// schema column i (only the columns of Columns are asked for), rows long and
// of the bound type; Filter neither retains nor releases it. Buffers come from
// mem. Use the mask with compute.FilterRecordBatch or a selection of your own.
func (b *Bound) Filter(ctx context.Context, mem memory.Allocator, col func(i int) arrow.Array, rows int) (*array.Boolean, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f := filterer{ctx: compute.WithAllocator(ctx, mem), mem: mem, col: col, rows: rows}
	r, err := f.eval(b.root)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return nullsFalse(mem, r), nil
}

type filterer struct {
	ctx  context.Context
	mem  memory.Allocator
	col  func(i int) arrow.Array
	rows int
}

// eval returns the three-valued result of n: a boolean array, null where the
// result is NULL.
func (f *filterer) eval(n *node) (*array.Boolean, error) {
	switch n.op {
	case opAnd, opOr:
		fn := "and_kleene"
		if n.op == opOr {
			fn = "or_kleene"
		}
		acc, err := f.eval(n.kids[0])
		if err != nil {
			return nil, err
		}
		for _, k := range n.kids[1:] {
			r, err := f.eval(k)
			if err != nil {
				acc.Release()
				return nil, err
			}
			next, err := f.call(fn, acc, r)
			acc.Release()
			r.Release()
			if err != nil {
				return nil, err
			}
			acc = next
		}
		return acc, nil
	case opNot:
		r, err := f.eval(n.kids[0])
		if err != nil {
			return nil, err
		}
		defer r.Release()
		return f.call("not", r)
	}

	arr := f.col(n.col)
	if arr == nil || arr.Len() != f.rows || !arrow.TypeEqual(arr.DataType(), n.typ) {
		return nil, fmt.Errorf("predicate: column %d (%s) is not an array of %d %s", n.col, n.name, f.rows, n.typ)
	}
	switch n.op {
	case opIsNull, opIsNotNull:
		return nullness(f.mem, arr, n.op == opIsNull), nil
	case opStartsWith:
		return startsWith(f.mem, arr, n.vals[0].(string)), nil
	case opIn, opNotIn:
		r, err := f.in(n, arr)
		if err != nil || n.op == opIn {
			return r, err
		}
		defer r.Release()
		return f.call("not", r)
	}
	if n.typ.ID() == arrow.BOOL && n.op != opEq && n.op != opNe {
		return f.boolOrder(n, arr)
	}
	float := n.typ.ID() == arrow.FLOAT32 || n.typ.ID() == arrow.FLOAT64
	if float && isNaN(n.vals[0]) {
		return f.nanOrder(n.op, arr)
	}
	r, err := f.call(compareFuncs[n.op], arr, n.lit)
	if err != nil || (n.op != opGt && n.op != opGe) {
		return r, err
	}
	if float {
		// IEEE comparisons leave NaN above nothing; here it is above
		// everything.
		defer r.Release()
		nan, err := f.call("is_nan", arr)
		if err != nil {
			return nil, err
		}
		defer nan.Release()
		return f.call("or_kleene", r, nan)
	}
	return r, nil
}

// nanOrder evaluates a comparison of a float column with NaN, which IEEE
// comparisons get wrong in the total order: NaN equals NaN and is above
// every other value.
func (f *filterer) nanOrder(o op, arr arrow.Array) (*array.Boolean, error) {
	switch o {
	case opLe: // everything is at most NaN
		return constBool(f.mem, arr, true), nil
	case opGt: // nothing is above it
		return constBool(f.mem, arr, false), nil
	}
	// Only NaN is unequal to itself; NULL stays NULL (is_nan makes it false).
	if o == opEq || o == opGe {
		return f.call("not_equal", arr, arr)
	}
	return f.call("equal", arr, arr) // ne, lt: the values that are not NaN
}

func isNaN(v any) bool {
	switch v := v.(type) {
	case float32:
		return v != v
	case float64:
		return v != v
	}
	return false
}

// in evaluates n, an in or not_in node, as in.
func (f *filterer) in(n *node, arr arrow.Array) (*array.Boolean, error) {
	if n.typ.ID() == arrow.BOOL {
		// Arrow's is_in gets booleans wrong in v18.8.0; with two values to
		// choose from, an equality does as well.
		var hasFalse, hasTrue bool
		for _, v := range n.vals {
			hasTrue = hasTrue || v.(bool)
			hasFalse = hasFalse || !v.(bool)
		}
		if hasFalse && hasTrue {
			return constBool(f.mem, arr, true), nil
		}
		return f.call("equal", arr, scalar.NewBooleanScalar(hasTrue))
	}
	// Arrow's is_in in v18.8.0 ignores the offset of a sliced decimal array
	// and leaks the hash table of strings and binaries: hash lookups of our
	// own do those.
	switch a := arr.(type) {
	case *array.Decimal128:
		return decimalIn(f.mem, a, n.decimals), nil
	case *array.String, *array.LargeString, *array.Binary, *array.LargeBinary:
		return bytesIn(f.mem, a, n.strs), nil
	}
	d, err := compute.IsIn(f.ctx, compute.SetOptions{
		ValueSet:     compute.NewDatumWithoutOwning(n.set),
		NullBehavior: compute.NullMatchingEmitNull,
	}, compute.NewDatumWithoutOwning(arr))
	if err != nil {
		return nil, fmt.Errorf("predicate: %s: %w", n.op, err)
	}
	return datumArray(d), nil
}

var compareFuncs = [...]string{opEq: "equal", opNe: "not_equal", opLt: "less", opLe: "less_equal", opGt: "greater", opGe: "greater_equal"}

// boolOrder evaluates lt, le, gt and ge on a boolean column, for which Arrow
// has no ordering kernels: false < true makes each one a constant or an
// equality.
func (f *filterer) boolOrder(n *node, arr arrow.Array) (*array.Boolean, error) {
	v := n.vals[0].(bool)
	switch {
	case n.op == opLt && !v, n.op == opGt && v: // nothing is below false or above true
		return constBool(f.mem, arr, false), nil
	case n.op == opLe && v, n.op == opGe && !v: // everything is
		return constBool(f.mem, arr, true), nil
	case n.op == opLt, n.op == opLe: // x < true, x <= false: x is false
		return f.call("equal", arr, scalar.NewBooleanScalar(false))
	}
	// x > false, x >= true: x is true
	return f.call("equal", arr, scalar.NewBooleanScalar(true))
}

// call calls a compute function on arrays and scalars, which it does not
// release, and returns its boolean result.
func (f *filterer) call(fn string, args ...any) (*array.Boolean, error) {
	ds := make([]compute.Datum, len(args))
	for i, a := range args {
		ds[i] = compute.NewDatumWithoutOwning(a)
	}
	d, err := compute.CallFunction(f.ctx, fn, nil, ds...)
	if err != nil {
		return nil, fmt.Errorf("predicate: %s: %w", fn, err)
	}
	return datumArray(d), nil
}

// datumArray returns the boolean array of d, taking over its reference.
func datumArray(d compute.Datum) *array.Boolean {
	defer d.Release()
	return d.(*compute.ArrayDatum).MakeArray().(*array.Boolean)
}

// startsWith returns whether each string of arr (utf8 or large_utf8) starts
// with prefix, null where arr is null. Arrow's Go kernels have no
// starts_with.
func startsWith(mem memory.Allocator, arr arrow.Array, prefix string) *array.Boolean {
	out := newBitmap(mem, arr.Len())
	switch a := arr.(type) {
	case *array.String:
		startsWithLoop(a.ValueOffsets(), valueData(a), prefix, out.Bytes())
	case *array.LargeString:
		startsWithLoop(a.ValueOffsets(), valueData(a), prefix, out.Bytes())
	}
	return boolArray(mem, arr, out)
}

func startsWithLoop[O int32 | int64](offs []O, data []byte, p string, bits []byte) {
	for i := 0; i+1 < len(offs); i++ {
		o := int(offs[i])
		if int(offs[i+1])-o >= len(p) && string(data[o:o+len(p)]) == p {
			bits[i>>3] |= 1 << (i & 7)
		}
	}
}

// valueData returns the data buffer of a string or binary array, which
// its value offsets index.
func valueData(arr arrow.Array) []byte {
	if buf := arr.Data().Buffers()[2]; buf != nil {
		return buf.Bytes()
	}
	return nil
}

// nullness returns whether each value of arr is null (or, if null is false,
// valid), read off the validity bitmap. (Arrow's is_null kernel panics on
// decimals in v18.8.0.)
func nullness(mem memory.Allocator, arr arrow.Array, null bool) *array.Boolean {
	n := arr.Len()
	out := newBitmap(mem, n)
	bits := out.Bytes()
	switch valid := arr.NullBitmapBytes(); {
	case arr.NullN() == 0:
		bitutil.SetBitsTo(bits, 0, int64(n), !null)
	case valid == nil: // a type without a validity bitmap
		for i := range n {
			bitutil.SetBitTo(bits, i, arr.IsNull(i) == null)
		}
	case null:
		bitutil.InvertBitmap(valid, arr.Data().Offset(), n, bits, 0)
	default:
		bitutil.CopyBitmap(valid, arr.Data().Offset(), n, bits, 0)
	}
	defer out.Release()
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, out}, nil, 0, 0)
	defer data.Release()
	return array.NewBooleanData(data)
}

// decimalIn returns whether each value of a is in set, null where a is
// null.
func decimalIn(mem memory.Allocator, a *array.Decimal128, set *memberSet[decimal128.Num]) *array.Boolean {
	out := newBitmap(mem, a.Len())
	bits := out.Bytes()
	for i, v := range a.Values() {
		if set.has(v, v.LowBits()) {
			bits[i>>3] |= 1 << (i & 7)
		}
	}
	return boolArray(mem, a, out)
}

// bytesIn returns whether each value of arr, an array of strings or
// binaries, is in set, null where arr is null.
func bytesIn(mem memory.Allocator, arr arrow.Array, set *memberSet[string]) *array.Boolean {
	out := newBitmap(mem, arr.Len())
	bits := out.Bytes()
	switch a := arr.(type) {
	case *array.String:
		bytesInLoop(a.ValueOffsets(), valueData(a), set, bits)
	case *array.LargeString:
		bytesInLoop(a.ValueOffsets(), valueData(a), set, bits)
	case *array.Binary:
		bytesInLoop(a.ValueOffsets(), valueData(a), set, bits)
	case *array.LargeBinary:
		bytesInLoop(a.ValueOffsets(), valueData(a), set, bits)
	}
	return boolArray(mem, arr, out)
}

func bytesInLoop[O int32 | int64](offs []O, data []byte, set *memberSet[string], bits []byte) {
	for i := 0; i+1 < len(offs); i++ {
		v := data[offs[i]:offs[i+1]]
		if set.has(strorder.View(v), strorder.PrefixKey(v)) {
			bits[i>>3] |= 1 << (i & 7)
		}
	}
}

// memberSet is the list of an in or not_in, made at Bind for the types that
// Filter looks up itself. A short list is searched in order, comparing a
// cheap hint first (the first 8 bytes of a string, the low bits of a
// decimal); a long one is a map.
type memberSet[T comparable] struct {
	vals  []T
	hints []uint64
	m     map[T]struct{}
}

const shortList = 16

func newMemberSet[T comparable](vals []T, hint func(T) uint64) *memberSet[T] {
	s := &memberSet[T]{}
	if len(vals) > shortList {
		s.m = make(map[T]struct{}, len(vals))
		for _, v := range vals {
			s.m[v] = struct{}{}
		}
		return s
	}
	s.vals = vals
	for _, v := range vals {
		s.hints = append(s.hints, hint(v))
	}
	return s
}

func (s *memberSet[T]) has(v T, hint uint64) bool {
	if s.m != nil {
		_, ok := s.m[v]
		return ok
	}
	for i, h := range s.hints {
		if h == hint && s.vals[i] == v {
			return true
		}
	}
	return false
}

// constBool returns an array as long as arr holding v, null where arr is null.
func constBool(mem memory.Allocator, arr arrow.Array, v bool) *array.Boolean {
	out := newBitmap(mem, arr.Len())
	if v {
		bitutil.SetBitsTo(out.Bytes(), 0, int64(arr.Len()), true)
	}
	return boolArray(mem, arr, out)
}

// newBitmap returns a zeroed bitmap of n bits.
func newBitmap(mem memory.Allocator, n int) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	clear(buf.Bytes())
	return buf
}

// boolArray makes a boolean array of the bitmap values (taking over its
// reference) with the nulls of like.
func boolArray(mem memory.Allocator, like arrow.Array, values *memory.Buffer) *array.Boolean {
	n := like.Len()
	var valid *memory.Buffer
	if nulls := like.NullN(); nulls > 0 {
		valid = newBitmap(mem, n)
		bitutil.CopyBitmap(like.NullBitmapBytes(), like.Data().Offset(), n, valid.Bytes(), 0)
		defer valid.Release()
	}
	defer values.Release()
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{valid, values}, nil, like.NullN(), 0)
	defer data.Release()
	return array.NewBooleanData(data)
}

// nullsFalse returns r with its nulls made false.
func nullsFalse(mem memory.Allocator, r *array.Boolean) *array.Boolean {
	if r.NullN() == 0 {
		r.Retain()
		return r
	}
	n, off := r.Len(), int64(r.Data().Offset())
	out := newBitmap(mem, n)
	bitutil.BitmapAnd(r.Data().Buffers()[1].Bytes(), r.NullBitmapBytes(), off, off, out.Bytes(), 0, int64(n))
	defer out.Release()
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, out}, nil, 0, 0)
	defer data.Release()
	return array.NewBooleanData(data)
}
