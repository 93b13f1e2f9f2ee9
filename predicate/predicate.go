// Package predicate is the filter language of scans (PROTOCOL.md §4.4): it
// parses and validates a JSON predicate, binds it to a schema (coercing
// literals), decides from a batch's statistics whether any row can match, and
// filters rows with Arrow compute kernels under SQL NULL semantics. The
// statistics it judges batches by are framestats', which owns their block
// in log frames. No I/O.
//
// Values compare as row.Compare orders them: for floats that is a total
// order in which -0 equals 0, NaN equals NaN and NaN is above +Inf (as in
// PostgreSQL and Spark SQL), so that filtering, batch skipping and key order
// agree. A comparison with a NULL column value is NULL, and a row is selected
// only where the whole predicate is true.
package predicate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fluxgate-io/fluxgate/errs"
)

// Limits on a predicate's shape: how deeply its objects may nest (the root
// is at depth 1), and how many it may hold in all. Filter evaluates each
// node over a whole batch, so a filter of millions of nodes would be cheap to
// send and dear to serve.
const (
	MaxDepth = 64
	MaxNodes = 4096
)

// Expr is a parsed predicate, not yet bound to a schema. It is immutable.
type Expr struct {
	op   op
	path string  // where the node is, for errors: filter.and[1].gt
	kids []*Expr // and, or: one or more; not: one
	col  string  // leaves: the column name
	vals []any   // comparisons: one literal; in, not_in: the list; starts_with: the prefix
}

// Parse parses a JSON predicate (PROTOCOL.md §4.4). Every error is
// errs.InvalidArgument and names the node at fault by its path, like
// filter.and[1].gt. A predicate beyond MaxDepth or MaxNodes is an error, and
// so is JSON null: a caller that allows "no filter" checks for it first.
func Parse(b []byte) (*Expr, error) {
	p := &parser{dec: json.NewDecoder(bytes.NewReader(b))}
	p.dec.UseNumber()
	e, err := p.node("filter", 1)
	if err != nil {
		return nil, err
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, errs.New(errs.InvalidArgument, "filter: unexpected data after the predicate")
	}
	return e, nil
}

// op is a predicate operator.
type op uint8

const (
	opAnd op = iota
	opOr
	opNot
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
	opIn
	opNotIn
	opIsNull
	opIsNotNull
	opStartsWith
)

var opNames = [...]string{
	opAnd:        "and",
	opOr:         "or",
	opNot:        "not",
	opEq:         "eq",
	opNe:         "ne",
	opLt:         "lt",
	opLe:         "le",
	opGt:         "gt",
	opGe:         "ge",
	opIn:         "in",
	opNotIn:      "not_in",
	opIsNull:     "is_null",
	opIsNotNull:  "is_not_null",
	opStartsWith: "starts_with",
}

func (o op) String() string { return opNames[o] }

var opByName = func() map[string]op {
	m := make(map[string]op, len(opNames))
	for o, name := range opNames {
		m[name] = op(o)
	}
	return m
}()

// operandShape is what each leaf operator takes, for error messages.
func (o op) operandShape() string {
	switch o {
	case opIn, opNotIn:
		return "[column, [value, ...]]"
	case opStartsWith:
		return `[column, "prefix"]`
	case opIsNull, opIsNotNull:
		return "a column name"
	}
	return "[column, value]"
}

type parser struct {
	dec   *json.Decoder
	nodes int
}

func invalid(path, format string, args ...any) error {
	return errs.New(errs.InvalidArgument, "%s: %s", path, fmt.Sprintf(format, args...))
}

// token reads the next JSON token; the end of input is an error too.
func (p *parser) token(path string) (json.Token, error) {
	tok, err := p.dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return nil, invalid(path, "unexpected end of the predicate")
	case err != nil:
		return nil, invalid(path, "malformed JSON: %v", err)
	}
	return tok, nil
}

// node parses one predicate object at depth.
func (p *parser) node(path string, depth int) (*Expr, error) {
	if depth > MaxDepth {
		return nil, invalid(path, "predicate nested deeper than %d levels", MaxDepth)
	}
	if p.nodes++; p.nodes > MaxNodes {
		return nil, invalid(path, "more than %d predicates in the filter", MaxNodes)
	}
	tok, err := p.token(path)
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, invalid(path, `expected a predicate object such as {"eq": [column, value]}, got %s`, describeToken(tok))
	}
	if tok, err = p.token(path); err != nil {
		return nil, err
	}
	key, ok := tok.(string)
	if !ok {
		return nil, invalid(path, "empty predicate object: expected one operator (%s)", strings.Join(opNames[:], ", "))
	}
	o, ok := opByName[key]
	if !ok {
		return nil, invalid(path, "unknown operator %s: expected one of %s", errs.Quote(key), strings.Join(opNames[:], ", "))
	}
	e := &Expr{op: o, path: path + "." + key}
	switch o {
	case opAnd, opOr:
		if tok, err = p.token(e.path); err != nil {
			return nil, err
		}
		if tok != json.Delim('[') {
			return nil, invalid(e.path, "expected a list of predicates, got %s", describeToken(tok))
		}
		for i := 0; p.dec.More(); i++ {
			k, err := p.node(fmt.Sprintf("%s[%d]", e.path, i), depth+1)
			if err != nil {
				return nil, err
			}
			e.kids = append(e.kids, k)
		}
		if _, err := p.token(e.path); err != nil { // the closing ]
			return nil, err
		}
		if len(e.kids) == 0 {
			return nil, invalid(e.path, "empty list: expected at least one predicate")
		}
	case opNot:
		k, err := p.node(e.path, depth+1)
		if err != nil {
			return nil, err
		}
		e.kids = []*Expr{k}
	default:
		v, err := p.value(e.path, o, 0)
		if err != nil {
			return nil, err
		}
		if err := e.setOperands(v); err != nil {
			return nil, err
		}
	}
	if tok, err = p.token(path); err != nil {
		return nil, err
	}
	if tok != json.Delim('}') {
		return nil, invalid(path, `more than one key in a predicate object (%s and %s): combine predicates with {"and": [...]}`, errs.Quote(key), errs.Quote(fmt.Sprint(tok)))
	}
	return e, nil
}

// value reads a JSON scalar, a bytes literal or a list of them. Operands need
// lists two deep ([column, [value, ...]]); a third level is read so that
// setOperands can say what is wrong with it.
func (p *parser) value(path string, o op, depth int) (any, error) {
	tok, err := p.token(path)
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		return p.bytesLiteral(path, o)
	case json.Delim('['):
		if depth >= 3 {
			return nil, invalid(path, "lists nested too deeply")
		}
		l := []any{}
		for p.dec.More() {
			v, err := p.value(path, o, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		if _, err := p.token(path); err != nil { // the closing ]
			return nil, err
		}
		return l, nil
	}
	return tok, nil
}

// bytesLiteral reads the rest of {"base64": "..."}, the one object among
// operands: a BINARY value that is not UTF-8 text, which a JSON string cannot
// carry.
func (p *parser) bytesLiteral(path string, o op) ([]byte, error) {
	notBytes := func() error {
		return invalid(path, `expected %s, got an object among the operands (the only object value is {"base64": "..."})`, o.operandShape())
	}
	key, err := p.token(path)
	if err != nil {
		return nil, err
	}
	if key != "base64" {
		return nil, notBytes()
	}
	text, err := p.token(path)
	if err != nil {
		return nil, err
	}
	s, ok := text.(string)
	if !ok {
		return nil, invalid(path, "base64: expected a string, got %s", describeToken(text))
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, invalid(path, "base64: %v", err)
	}
	if end, err := p.token(path); err != nil {
		return nil, err
	} else if end != json.Delim('}') {
		return nil, notBytes()
	}
	return b, nil
}

// setOperands checks the operands v of a leaf and stores them.
func (e *Expr) setOperands(v any) error {
	if e.op == opIsNull || e.op == opIsNotNull {
		col, ok := v.(string)
		if !ok {
			return invalid(e.path, "expected a column name, got %s", describeValue(v))
		}
		if col == "" {
			return invalid(e.path, "empty column name")
		}
		e.col = col
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		return invalid(e.path, "expected %s, got %s", e.op.operandShape(), describeValue(v))
	}
	if len(l) != 2 {
		return invalid(e.path, "expected %s, got a list of %d elements", e.op.operandShape(), len(l))
	}
	col, ok := l[0].(string)
	if !ok {
		return invalid(e.path, "expected %s: the first element must be a column name, got %s", e.op.operandShape(), describeValue(l[0]))
	}
	if col == "" {
		return invalid(e.path, "empty column name")
	}
	e.col = col
	switch e.op {
	case opIn, opNotIn:
		vals, ok := l[1].([]any)
		if !ok {
			return invalid(e.path, "expected %s: the second element must be a list, got %s", e.op.operandShape(), describeValue(l[1]))
		}
		if len(vals) == 0 {
			return invalid(e.path, "empty value list")
		}
		for i, v := range vals {
			switch v.(type) {
			case nil:
				return invalid(e.path, "value %d of the list is null: NULL never matches, use is_null or is_not_null", i)
			case []any:
				return invalid(e.path, "value %d of the list is a list, not a scalar", i)
			}
		}
		e.vals = vals
	case opStartsWith:
		prefix, ok := l[1].(string)
		if !ok {
			return invalid(e.path, "the prefix must be a string, got %s", describeValue(l[1]))
		}
		e.vals = []any{prefix}
	default:
		switch l[1].(type) {
		case nil:
			return invalid(e.path, "the value is null: a comparison with NULL is never true, use is_null or is_not_null")
		case []any:
			return invalid(e.path, "the value must be a scalar, not a list (use in for a list)")
		}
		e.vals = []any{l[1]}
	}
	return nil
}

func describeToken(tok json.Token) string {
	switch tok {
	case json.Delim('{'):
		return "an object"
	case json.Delim('['):
		return "a list"
	case json.Delim('}'), json.Delim(']'):
		return fmt.Sprintf("%q", tok)
	}
	return describeValue(tok)
}

func describeValue(v any) string {
	const limit = 40
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if len(v) > limit {
			return fmt.Sprintf("the string %q...", v[:limit])
		}
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		if len(v) > limit {
			return "the number " + string(v[:limit]) + "..."
		}
		return "the number " + string(v)
	case bool:
		return fmt.Sprintf("%t", v)
	case []any:
		return fmt.Sprintf("a list of %d elements", len(v))
	case []byte:
		return fmt.Sprintf("%d bytes", len(v))
	}
	return fmt.Sprintf("%T", v)
}
