package lake

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/fluxgate-io/fluxgate/predicate"
)

// pruning turns a bound predicate into an Iceberg expression that selects
// a superset of its rows, for partition and file pruning. The caller filters
// the rows exactly itself: Iceberg's evaluators do not follow SQL's NULL
// semantics for ne and not_in, so those (and anything under not) prune
// nothing; neither do literals of types without an Iceberg literal here.
func pruning(t predicate.Term) iceberg.BooleanExpression {
	switch t.Op {
	case "and", "or":
		kids := make([]iceberg.BooleanExpression, len(t.Terms))
		for i, k := range t.Terms {
			kids[i] = pruning(k)
		}
		if len(kids) == 1 {
			return kids[0]
		}
		if t.Op == "and" {
			return iceberg.NewAnd(kids[0], kids[1], kids[2:]...)
		}
		return iceberg.NewOr(kids[0], kids[1], kids[2:]...)
	case "is_null":
		return iceberg.IsNull(iceberg.Reference(t.Column))
	case "is_not_null":
		return iceberg.NotNull(iceberg.Reference(t.Column))
	case "starts_with":
		if s, ok := t.Values[0].(string); ok {
			return iceberg.StartsWith(iceberg.Reference(t.Column), s)
		}
		return iceberg.AlwaysTrue{}
	}
	ops := map[string]iceberg.Operation{"eq": iceberg.OpEQ, "lt": iceberg.OpLT, "le": iceberg.OpLTEQ,
		"gt": iceberg.OpGT, "ge": iceberg.OpGTEQ, "in": iceberg.OpIn}
	op, ok := ops[t.Op]
	if !ok {
		return iceberg.AlwaysTrue{}
	}
	lits := make([]iceberg.Literal, len(t.Values))
	for i, v := range t.Values {
		if lits[i], ok = literal(t.Type, v); !ok {
			return iceberg.AlwaysTrue{}
		}
	}
	if op == iceberg.OpIn {
		return iceberg.SetPredicate(op, iceberg.Reference(t.Column), lits)
	}
	return iceberg.LiteralPredicate(op, iceberg.Reference(t.Column), lits[0])
}

// literal converts a row value of a column of type typ to the Iceberg
// literal of the column's lake type.
func literal(typ arrow.DataType, v any) (iceberg.Literal, bool) {
	switch v := v.(type) {
	case bool:
		return iceberg.NewLiteral(v), true
	case int8:
		return iceberg.NewLiteral(int32(v)), true
	case int16:
		return iceberg.NewLiteral(int32(v)), true
	case int32:
		return iceberg.NewLiteral(v), true
	case int64:
		return iceberg.NewLiteral(v), true
	case float32:
		return iceberg.NewLiteral(v), true
	case float64:
		return iceberg.NewLiteral(v), true
	case string:
		return iceberg.NewLiteral(v), true
	case []byte:
		return iceberg.NewLiteral(v), true
	case arrow.Time32:
		if tt, ok := typ.(*arrow.Time32Type); ok {
			return iceberg.NewLiteral(iceberg.Time(int64(v) * unitMicros(tt.Unit))), true
		}
		return nil, false
	case arrow.Time64:
		if tt, ok := typ.(*arrow.Time64Type); ok && tt.Unit == arrow.Microsecond {
			return iceberg.NewLiteral(iceberg.Time(v)), true
		}
		return nil, false
	case arrow.Date32:
		return iceberg.NewLiteral(iceberg.Date(v)), true
	case arrow.Timestamp:
		ts, ok := typ.(*arrow.TimestampType)
		if !ok {
			return nil, false
		}
		if ts.Unit == arrow.Nanosecond {
			return nil, false
		}
		return iceberg.NewLiteral(iceberg.Timestamp(int64(v) * unitMicros(ts.Unit))), true
	}
	return nil, false
}
