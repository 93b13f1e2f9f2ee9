package predicate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fluxgate-io/fluxgate/framestats"
	"github.com/fluxgate-io/fluxgate/row"
)

// A column kind of the differential test: its type, a generator of values
// (from a small domain, so that literals drawn from elsewhere hit too) and
// the JSON literal of a value, false if JSON cannot spell it.
type colKind struct {
	typ arrow.DataType
	gen func(r *rand.Rand) any
	lit func(v any) (any, bool)
}

var longString = strings.Repeat("x", 70)

var stringDomain = []string{
	"", "a", "ab", "abc", "abd", "b", "ba", "bz", "é", "éa", "日本", "日本語", "z\x00", "\xff",
	longString, longString + "a", longString + "b", strings.Repeat("y", 64), strings.Repeat("y", 65),
	strings.Repeat("é", 40), "\U0010FFFF",
}

var floatDomain = []float64{
	-1.5, math.Copysign(0, -1), 0, 0.25, 1, 3.75, 100, 1e30, -1e30, math.Inf(1), math.Inf(-1), math.NaN(),
}

func intKind(typ arrow.DataType, bits int, conv func(int64) any) colKind {
	lim := int64(1) << (bits - 1)
	return colKind{
		typ: typ,
		gen: func(r *rand.Rand) any {
			switch r.IntN(10) {
			case 0:
				return conv(-lim)
			case 1:
				return conv(lim - 1)
			}
			return conv(r.Int64N(41) - 20)
		},
		lit: func(v any) (any, bool) { return json.Number(fmt.Sprint(v)), true },
	}
}

func floatKind(bits int) colKind {
	typ := arrow.DataType(arrow.PrimitiveTypes.Float64)
	conv := func(f float64) any { return f }
	if bits == 32 {
		typ = arrow.PrimitiveTypes.Float32
		conv = func(f float64) any { return float32(f) }
	}
	return colKind{
		typ: typ,
		gen: func(r *rand.Rand) any {
			if r.IntN(3) == 0 {
				return conv(float64(r.IntN(200)-100) / 8)
			}
			return conv(floatDomain[r.IntN(len(floatDomain))])
		},
		lit: func(v any) (any, bool) {
			var f float64
			switch v := v.(type) {
			case float32:
				f = float64(v)
			case float64:
				f = v
			}
			switch {
			case math.IsNaN(f):
				return "NaN", true
			case math.IsInf(f, 1):
				return "Infinity", true
			case math.IsInf(f, -1):
				return "-Infinity", true
			}
			return json.Number(strconv.FormatFloat(f, 'g', -1, bits)), true
		},
	}
}

func decimalKind(prec, scale int32, gen func(r *rand.Rand) decimal128.Num) colKind {
	typ := &arrow.Decimal128Type{Precision: prec, Scale: scale}
	return colKind{
		typ: typ,
		gen: func(r *rand.Rand) any { return gen(r) },
		lit: func(v any) (any, bool) {
			s := v.(decimal128.Num).ToString(scale)
			if scale == 0 && v.(decimal128.Num).LowBits()%2 == 0 {
				return json.Number(s), true // numbers work too
			}
			return s, true
		},
	}
}

func stringKind(typ arrow.DataType, bytes bool) colKind {
	return colKind{
		typ: typ,
		gen: func(r *rand.Rand) any {
			s := stringDomain[r.IntN(len(stringDomain))]
			if bytes {
				return []byte(s)
			}
			return s
		},
		lit: func(v any) (any, bool) {
			s, ok := v.(string)
			if !ok {
				s = string(v.([]byte))
			}
			return s, utf8.ValidString(s) // JSON holds only valid UTF-8
		},
	}
}

func timeKind(typ arrow.DataType) colKind {
	unit := typ.(arrow.TemporalWithUnit).TimeUnit()
	perSec := int64(time.Second / unit.Multiplier())
	return colKind{
		typ: typ,
		gen: func(r *rand.Rand) any {
			n := r.Int64N(86400) * perSec
			if r.IntN(2) == 0 {
				n = (r.Int64N(6) + 43200) * perSec
			}
			n += r.Int64N(perSec)
			if typ.ID() == arrow.TIME32 {
				return arrow.Time32(n)
			}
			return arrow.Time64(n)
		},
		lit: func(v any) (any, bool) {
			var n int64
			switch v := v.(type) {
			case arrow.Time32:
				n = int64(v)
			case arrow.Time64:
				n = int64(v)
			}
			d := time.Duration(n) * unit.Multiplier()
			return time.Unix(0, 0).UTC().Add(d).Format("15:04:05.000000000"), true
		},
	}
}

func timestampKind(unit arrow.TimeUnit, zone string) colKind {
	typ := &arrow.TimestampType{Unit: unit, TimeZone: zone}
	perSec := int64(time.Second / unit.Multiplier())
	return colKind{
		typ: typ,
		gen: func(r *rand.Rand) any {
			secs := r.Int64N(4e9) - 2e9
			if r.IntN(2) == 0 {
				secs = 1.7e9 + r.Int64N(10)
			}
			return arrow.Timestamp(secs*perSec + r.Int64N(perSec))
		},
		lit: func(v any) (any, bool) {
			n := int64(v.(arrow.Timestamp))
			if unit != arrow.Second && n%(perSec/1000) == 0 && n%7 == 0 {
				return json.Number(strconv.FormatInt(n/(perSec/1000), 10)), true // epoch milliseconds
			}
			t := v.(arrow.Timestamp).ToTime(unit).UTC()
			s := t.Format("2006-01-02T15:04:05.000000000")
			if zone != "" {
				switch n % 3 {
				case 0:
					s += "Z"
				case 1:
					s = t.Add(-90*time.Minute).Format("2006-01-02T15:04:05.000000000") + "-01:30"
				}
			}
			return s, true
		},
	}
}

var colKinds = []colKind{
	{
		typ: arrow.FixedWidthTypes.Boolean,
		gen: func(r *rand.Rand) any { return r.IntN(2) == 0 },
		lit: func(v any) (any, bool) { return v, true },
	},
	intKind(arrow.PrimitiveTypes.Int8, 8, func(n int64) any { return int8(n) }),
	intKind(arrow.PrimitiveTypes.Int16, 16, func(n int64) any { return int16(n) }),
	intKind(arrow.PrimitiveTypes.Int32, 32, func(n int64) any { return int32(n) }),
	intKind(arrow.PrimitiveTypes.Int64, 64, func(n int64) any { return n }),
	floatKind(32),
	floatKind(64),
	decimalKind(10, 2, func(r *rand.Rand) decimal128.Num { return decimal128.FromI64(r.Int64N(4001) - 2000) }),
	decimalKind(5, 5, func(r *rand.Rand) decimal128.Num { return decimal128.FromI64(r.Int64N(199999) - 99999) }),
	decimalKind(38, 0, func(r *rand.Rand) decimal128.Num {
		return decimal128.New(r.Int64N(7)-3, r.Uint64()&^7|uint64(r.IntN(8)))
	}),
	stringKind(arrow.BinaryTypes.String, false),
	stringKind(arrow.BinaryTypes.LargeString, false),
	stringKind(arrow.BinaryTypes.Binary, true),
	stringKind(arrow.BinaryTypes.LargeBinary, true),

	{
		typ: arrow.FixedWidthTypes.Date32,
		gen: func(r *rand.Rand) any { return arrow.Date32(r.Int64N(40000) - 10000) },
		lit: func(v any) (any, bool) { return v.(arrow.Date32).ToTime().Format("2006-01-02"), true },
	},
	timeKind(arrow.FixedWidthTypes.Time32s),
	timeKind(arrow.FixedWidthTypes.Time32ms),
	timeKind(arrow.FixedWidthTypes.Time64us),
	timeKind(arrow.FixedWidthTypes.Time64ns),
	timestampKind(arrow.Second, ""),
	timestampKind(arrow.Millisecond, ""),
	timestampKind(arrow.Microsecond, ""),
	timestampKind(arrow.Nanosecond, ""),
	timestampKind(arrow.Millisecond, "UTC"),
	timestampKind(arrow.Microsecond, "UTC"),
	timestampKind(arrow.Nanosecond, "UTC"),
	{ // nested: only is_null and is_not_null apply
		typ: arrow.ListOf(arrow.PrimitiveTypes.Int32),
		gen: func(r *rand.Rand) any { return []any{int32(r.IntN(3)), nil} },
	},
}

// tnode is the test's own form of a predicate, with the literals as Go
// values of the column type, evaluated row by row.
type tnode struct {
	op   op
	kids []*tnode
	col  int
	vals []any
}

// json returns the predicate as PROTOCOL.md spells it.
func (n *tnode) json(names []string, kinds []colKind) any {
	var operands any
	switch n.op {
	case opAnd, opOr:
		l := make([]any, len(n.kids))
		for i, k := range n.kids {
			l[i] = k.json(names, kinds)
		}
		operands = l
	case opNot:
		operands = n.kids[0].json(names, kinds)
	case opIsNull, opIsNotNull:
		operands = names[n.col]
	case opStartsWith:
		operands = []any{names[n.col], n.vals[0]}
	case opIn, opNotIn:
		l := make([]any, len(n.vals))
		for i, v := range n.vals {
			l[i], _ = kinds[n.col].lit(v)
		}
		operands = []any{names[n.col], l}
	default:
		v, _ := kinds[n.col].lit(n.vals[0])
		operands = []any{names[n.col], v}
	}
	return map[string]any{n.op.String(): operands}
}

// Three-valued results.
const (
	tFalse = 0
	tTrue  = 1
	tNull  = 2
)

func (n *tnode) eval(cols []arrow.Array, types []arrow.DataType, i int) int {
	switch n.op {
	case opAnd, opOr:
		dominant, other := tFalse, tTrue
		if n.op == opOr {
			dominant, other = tTrue, tFalse
		}
		res := other
		for _, k := range n.kids {
			switch k.eval(cols, types, i) {
			case dominant:
				return dominant
			case tNull:
				res = tNull
			}
		}
		return res
	case opNot:
		switch k := n.kids[0].eval(cols, types, i); k {
		case tNull:
			return tNull
		default:
			return 1 - k
		}
	}
	v := row.Get(cols[n.col], i)
	switch n.op {
	case opIsNull:
		return tb(v == nil)
	case opIsNotNull:
		return tb(v != nil)
	}
	if v == nil {
		return tNull
	}
	t := types[n.col]
	c := func(lit any) int { return row.Compare(t, v, lit) }
	switch n.op {
	case opEq:
		return tb(c(n.vals[0]) == 0)
	case opNe:
		return tb(c(n.vals[0]) != 0)
	case opLt:
		return tb(c(n.vals[0]) < 0)
	case opLe:
		return tb(c(n.vals[0]) <= 0)
	case opGt:
		return tb(c(n.vals[0]) > 0)
	case opGe:
		return tb(c(n.vals[0]) >= 0)
	case opIn, opNotIn:
		found := slices.ContainsFunc(n.vals, func(lit any) bool { return c(lit) == 0 })
		return tb(found == (n.op == opIn))
	case opStartsWith:
		return tb(strings.HasPrefix(v.(string), n.vals[0].(string)))
	}
	panic("unreachable")
}

func tb(b bool) int {
	if b {
		return tTrue
	}
	return tFalse
}

// batch is one random batch of the differential test.
type batch struct {
	kinds []colKind
	names []string
	types []arrow.DataType
	vals  [][]any // vals[col][row], the unsliced values
	rec   arrow.RecordBatch
}

func randomBatch(r *rand.Rand, mem memory.Allocator) *batch {
	ncols := 1 + r.IntN(5)
	b := &batch{}
	fields := make([]arrow.Field, ncols)
	for i := range ncols {
		k := colKinds[r.IntN(len(colKinds))]
		b.kinds = append(b.kinds, k)
		b.names = append(b.names, fmt.Sprintf("c%d", i))
		b.types = append(b.types, k.typ)
		fields[i] = arrow.Field{Name: b.names[i], Type: k.typ, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	rows := []int{0, 1, 2, 3, 7, 33, 100, 300}[r.IntN(8)]
	skip := 0
	if r.IntN(4) == 0 {
		skip = r.IntN(10)
	}
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	for c, k := range b.kinds {
		nullP := []float64{0, 0, 0.1, 0.5, 1}[r.IntN(5)]
		col := make([]any, skip+rows)
		for i := range col {
			if r.Float64() >= nullP {
				col[i] = k.gen(r)
			}
		}
		if k.typ.ID() != arrow.LIST && r.IntN(3) == 0 { // sorted, nulls first
			slices.SortFunc(col, func(x, y any) int { return row.Compare(k.typ, x, y) })
		}
		b.vals = append(b.vals, col)
		for _, v := range col {
			row.Append(bld.Field(c), v)
		}
	}
	rec := bld.NewRecordBatch()
	if skip > 0 {
		b.rec = rec.NewSlice(int64(skip), int64(skip+rows))
		rec.Release()
	} else {
		b.rec = rec
	}
	return b
}

// literal returns a value for a literal on column c: one of the batch's
// values or a fresh one, which JSON can spell.
func (b *batch) literal(r *rand.Rand, c int) any {
	for {
		var v any
		if col := b.vals[c]; len(col) > 0 && r.IntN(3) > 0 {
			v = col[r.IntN(len(col))]
		}
		if v == nil {
			v = b.kinds[c].gen(r)
		}
		if _, ok := b.kinds[c].lit(v); ok {
			return v
		}
	}
}

func (b *batch) randomPredicate(r *rand.Rand, depth int) *tnode {
	if depth < 4 && r.IntN(3) == 0 {
		n := &tnode{op: []op{opAnd, opOr, opNot}[r.IntN(3)]}
		kids := 1
		if n.op != opNot {
			kids = 1 + r.IntN(3)
		}
		for range kids {
			n.kids = append(n.kids, b.randomPredicate(r, depth+1))
		}
		return n
	}
	c := r.IntN(len(b.kinds))
	n := &tnode{col: c}
	t := b.types[c]
	switch {
	case t.ID() == arrow.LIST:
		n.op = []op{opIsNull, opIsNotNull}[r.IntN(2)]
	case (t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING) && r.IntN(4) == 0:
		n.op = opStartsWith
		s := b.literal(r, c).(string)
		cut := r.IntN(len(s) + 1)
		for !utf8.ValidString(s[:cut]) {
			cut--
		}
		n.vals = []any{s[:cut]}
	default:
		n.op = []op{opEq, opNe, opLt, opLe, opGt, opGe, opIn, opNotIn, opIsNull, opIsNotNull}[r.IntN(10)]
		switch n.op {
		case opIn, opNotIn:
			for range 1 + r.IntN(4) {
				n.vals = append(n.vals, b.literal(r, c))
			}
		case opIsNull, opIsNotNull:
		default:
			n.vals = []any{b.literal(r, c)}
		}
	}
	return n
}

func TestDifferential(t *testing.T) {
	seed := uint64(1)
	if s, err := strconv.ParseUint(strings.TrimSpace(os.Getenv("PREDICATE_SEED")), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (PREDICATE_SEED=%d to repeat)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()

	batches, predicates := 400, 25
	if testing.Short() {
		batches = 50
	}
	var matching, pruned, nonEmpty, provenAll int
	ops := map[op]int{}
	for range batches {
		b := randomBatch(r, mem)
		stats, err := framestats.Decode(framestats.Compute(b.rec), b.types)
		if err != nil {
			t.Fatalf("framestats.Decode(framestats.Compute): %v", err)
		}
		checkStats(t, b, stats)
		rows := int(b.rec.NumRows())
		cols := b.rec.Columns()
		schema := b.rec.Schema()
		for range predicates {
			tn := b.randomPredicate(r, 1)
			countOps(tn, ops)
			js, err := json.Marshal(tn.json(b.names, b.kinds))
			if err != nil {
				t.Fatal(err)
			}
			e, err := Parse(js)
			if err != nil {
				t.Fatalf("Parse(%s): %v", js, err)
			}
			bound, err := Bind(e, schema)
			if err != nil {
				t.Fatalf("Bind(%s): %v", js, err)
			}
			_ = bound.String()

			mask, err := bound.Filter(ctx, mem, func(i int) arrow.Array { return cols[i] }, rows)
			if err != nil {
				t.Fatalf("Filter(%s): %v", js, err)
			}
			if mask.Len() != rows || mask.NullN() != 0 {
				t.Fatalf("Filter(%s): mask of %d rows with %d nulls, want %d rows without", js, mask.Len(), mask.NullN(), rows)
			}
			any, all := false, true
			for i := range rows {
				want := tn.eval(cols, b.types, i) == tTrue
				if mask.Value(i) != want {
					t.Fatalf("Filter(%s) row %d (%v): %t, want %t\n%s", js, i, rowValues(cols, i), mask.Value(i), want, show(b.rec))
				}
				any = any || want
				all = all && want
			}
			mask.Release()
			if bound.MatchesAll(int64(rows), stats) {
				if !all {
					t.Fatalf("MatchesAll(%s) = true, but a row does not match; stats %+v\n%s", js, stats, show(b.rec))
				}
				provenAll++
			}
			if bound.MatchesAll(int64(rows), nil) {
				t.Fatalf("MatchesAll(%s) without statistics = true", js)
			}

			may := bound.MayMatch(int64(rows), stats)
			if any && !may {
				t.Fatalf("MayMatch(%s) = false, but a row matches; stats %+v\n%s", js, stats, show(b.rec))
			}
			if rows > 0 && !bound.MayMatch(int64(rows), nil) {
				t.Fatalf("MayMatch(%s) without statistics = false", js)
			}
			if rows > 0 {
				nonEmpty++
				if any {
					matching++
				} else if !may {
					pruned++
				}
			}
		}
		b.rec.Release()
	}
	notMatching := nonEmpty - matching
	t.Logf("%d predicates over non-empty batches: %d match some row; of the %d that match none, statistics prune %d (%.0f%%)",
		nonEmpty, matching, notMatching, pruned, 100*float64(pruned)/float64(max(notMatching, 1)))
	t.Logf("statistics prove that every row matches for %d", provenAll)
	t.Logf("operators: %v", ops)
	if pruned == 0 {
		t.Errorf("statistics never pruned a batch")
	}
	if provenAll == 0 {
		t.Errorf("statistics never proved that every row matches")
	}
	for o := opAnd; o <= opStartsWith; o++ {
		if ops[o] == 0 {
			t.Errorf("operator %s never generated", o)
		}
	}
}

// show prints a small batch for a failure message.
func show(rec arrow.RecordBatch) string {
	if rec.NumRows() > 20 {
		return fmt.Sprintf("(a batch of %d rows)", rec.NumRows())
	}
	return fmt.Sprint(rec)
}

func countOps(n *tnode, ops map[op]int) {
	ops[n.op]++
	for _, k := range n.kids {
		countOps(k, ops)
	}
}

func rowValues(cols []arrow.Array, i int) []any {
	r := make([]any, len(cols))
	for c := range cols {
		r[c] = row.Get(cols[c], i)
	}
	return r
}

// checkStats checks that stats hold the batch's null counts and bound its
// values.
func checkStats(t *testing.T, b *batch, stats []framestats.Column) {
	t.Helper()
	if len(stats) != len(b.types) {
		t.Fatalf("%d column statistics for %d columns", len(stats), len(b.types))
	}
	for c, arr := range b.rec.Columns() {
		st, typ := stats[c], b.types[c]
		if st.NullCount != int64(arr.NullN()) {
			t.Fatalf("column %d (%s): null count %d, want %d", c, typ, st.NullCount, arr.NullN())
		}
		switch typ.ID() {
		case arrow.LIST, arrow.BINARY, arrow.LARGE_BINARY:
			if st.Min != nil || st.Max != nil {
				t.Fatalf("column %d (%s): bounds %v, %v, want none", c, typ, st.Min, st.Max)
			}
			continue
		}
		if arr.NullN() == arr.Len() {
			if st.Min != nil || st.Max != nil {
				t.Fatalf("column %d (%s): bounds %v, %v, want none", c, typ, st.Min, st.Max)
			}
			continue
		}
		if st.Min == nil {
			t.Fatalf("column %d (%s): no minimum", c, typ)
		}
		wantMax := true
		for i := range arr.Len() {
			v := row.Get(arr, i)
			if v == nil {
				continue
			}
			if s, ok := v.(string); ok && len(s) > framestats.MaxString && s[:framestats.MaxString] == strings.Repeat("\xff", framestats.MaxString) {
				wantMax = false
			}
			if row.Compare(typ, st.Min, v) > 0 || (st.Max != nil && row.Compare(typ, st.Max, v) < 0) {
				t.Fatalf("column %d (%s): value %v outside [%v, %v]", c, typ, v, st.Min, st.Max)
			}
		}
		if st.Max == nil && wantMax {
			t.Fatalf("column %d (%s): no maximum", c, typ)
		}
	}
}
