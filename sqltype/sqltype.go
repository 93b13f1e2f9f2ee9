// Package sqltype handles Flink SQL type names as the protocol uses them
// (PROTOCOL.md §2): parsing, canonical spelling, the Arrow type on the wire,
// and the type classes the option rules need; no I/O, imported by both server
// and client.
package sqltype

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/errs"
)

// Type is a parsed Flink SQL type.
type Type struct {
	root string // the canonical keyword, e.g. "VARCHAR" for VARCHAR(20)
	text string // the canonical spelling
	dt   arrow.DataType
}

// Parse parses a Flink SQL type name, case-insensitive: the types of
// PROTOCOL.md §2 with their aliases (INTEGER, DEC, NUMERIC), optional
// parameters (VARCHAR(n), DECIMAL(p,s), TIME(p), TIMESTAMP(p) ...),
// TIMESTAMP(p) WITH LOCAL TIME ZONE / WITHOUT TIME ZONE, and ARRAY<t>,
// MAP<k, v>, ROW<name t, ...> (or ROW(...)) whose element, value and field
// types may be followed by NOT NULL. Nesting deeper than 32 levels is refused.
// The error names the type and the offset of the problem.
func Parse(s string) (*Type, error) {
	p := &parser{src: s}
	t, err := p.parseType(0)
	if err == nil && p.peek() != "" {
		err = p.errorf("unexpected %s after the type", errs.Quote(p.peek()))
	}
	if err != nil {
		return nil, fmt.Errorf("invalid type %s: %w", errs.Quote(s), err)
	}
	return t, nil
}

// String returns the canonical spelling: upper case, aliases resolved and
// default parameters written out (`timestamp` → `TIMESTAMP(6)`, `integer` →
// `INT`, `decimal` → `DECIMAL(10,0)`). It parses back to the same type.
func (t *Type) String() string { return t.text }

// Arrow returns the Arrow type on the wire (PROTOCOL.md §2).
func (t *Type) Arrow() arrow.DataType { return t.dt }

// Root returns the canonical keyword without parameters or element types:
// "VARCHAR" for VARCHAR(20), "TIMESTAMP_LTZ" for TIMESTAMP(3) WITH LOCAL TIME
// ZONE, "ARRAY" for ARRAY<INT>.
func (t *Type) Root() string { return t.root }

// Nested reports ARRAY, MAP and ROW.
func (t *Type) Nested() bool { return t.root == "ARRAY" || t.root == "MAP" || t.root == "ROW" }

// Numeric reports TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE and DECIMAL.
func (t *Type) Numeric() bool {
	switch t.root {
	case "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL":
		return true
	}
	return false
}

// Character reports Fluss's STRING and CHAR roots (VARCHAR(n) is a STRING
// there).
func (t *Type) Character() bool {
	return t.root == "STRING" || t.root == "VARCHAR" || t.root == "CHAR"
}

// Ordered reports the types that max and min accept: numeric, character,
// DATE, TIME, TIMESTAMP and TIMESTAMP_LTZ.
func (t *Type) Ordered() bool {
	switch t.root {
	case "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ":
		return true
	}
	return t.Numeric() || t.Character()
}

// simpleTypes are the types without parameters.
var simpleTypes = map[string]arrow.DataType{
	"BOOLEAN":  arrow.FixedWidthTypes.Boolean,
	"TINYINT":  arrow.PrimitiveTypes.Int8,
	"SMALLINT": arrow.PrimitiveTypes.Int16,
	"INT":      arrow.PrimitiveTypes.Int32,
	"INTEGER":  arrow.PrimitiveTypes.Int32,
	"BIGINT":   arrow.PrimitiveTypes.Int64,
	"FLOAT":    arrow.PrimitiveTypes.Float32,
	"DOUBLE":   arrow.PrimitiveTypes.Float64,
	"STRING":   arrow.BinaryTypes.String,
	"BYTES":    arrow.BinaryTypes.Binary,
	"DATE":     arrow.FixedWidthTypes.Date32,
}

// typeNames lists the types Parse accepts, for its errors.
const typeNames = "BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p,s), CHAR(n), VARCHAR(n), STRING, " +
	"BINARY(n), VARBINARY(n), BYTES, DATE, TIME(p), TIMESTAMP(p), TIMESTAMP_LTZ(p), ARRAY<t>, MAP<k, v>, ROW<name t, ...>"

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 32

// parser is a recursive-descent parser over identifiers, integers and the
// punctuation ( ) < > ,.
type parser struct {
	src string
	pos int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

// peek returns the next token without consuming it, "" at the end.
func (p *parser) peek() string {
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == len(p.src) {
		return ""
	}
	end := p.pos
	for end < len(p.src) && isWordByte(p.src[end]) {
		end++
	}
	if end == p.pos {
		end++ // a punctuation byte, or something invalid for the caller to reject
	}
	return p.src[p.pos:end]
}

func (p *parser) next() string {
	tok := p.peek()
	p.pos += len(tok)
	return tok
}

// accept consumes the next token if it equals tok, ignoring case.
func (p *parser) accept(tok string) bool {
	if strings.EqualFold(p.peek(), tok) {
		p.next()
		return true
	}
	return false
}

// expect consumes the tokens toks in order, or fails at the first missing one.
func (p *parser) expect(toks ...string) error {
	for _, tok := range toks {
		if !p.accept(tok) {
			return p.errorf("expected %s, found %s", errs.Quote(tok), describeToken(p.peek()))
		}
	}
	return nil
}

func (p *parser) parseType(depth int) (*Type, error) {
	if depth > maxDepth {
		return nil, p.errorf("types nested deeper than %d levels", maxDepth)
	}
	word := p.peek()
	if word == "" || !isWordByte(word[0]) {
		return nil, p.errorf("expected a type name, found %s; the types are %s", describeToken(word), typeNames)
	}
	start := p.pos
	p.next()
	kw := strings.ToUpper(word)
	if dt, ok := simpleTypes[kw]; ok {
		if kw == "INTEGER" {
			kw = "INT"
		}
		return &Type{root: kw, text: kw, dt: dt}, nil
	}
	switch kw {
	case "DECIMAL", "DEC", "NUMERIC":
		prec, scale := 10, 0
		if p.accept("(") {
			var err error
			if prec, err = p.integer(1, 38, "DECIMAL precision"); err != nil {
				return nil, err
			}
			if p.accept(",") {
				if scale, err = p.integer(0, prec, "DECIMAL scale"); err != nil {
					return nil, err
				}
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
		}
		return &Type{root: "DECIMAL", text: fmt.Sprintf("DECIMAL(%d,%d)", prec, scale),
			dt: &arrow.Decimal128Type{Precision: int32(prec), Scale: int32(scale)}}, nil
	case "VARCHAR", "CHAR", "VARBINARY", "BINARY":
		n, err := p.optParam(1, 1, 1<<31-1, kw+" length")
		if err != nil {
			return nil, err
		}
		dt := arrow.DataType(arrow.BinaryTypes.String)
		if strings.HasSuffix(kw, "BINARY") {
			dt = arrow.BinaryTypes.Binary
		}
		return &Type{root: kw, text: fmt.Sprintf("%s(%d)", kw, n), dt: dt}, nil
	case "TIME":
		prec, err := p.optParam(0, 0, 9, "TIME precision")
		if err != nil {
			return nil, err
		}
		if p.accept("WITHOUT") {
			if err := p.expect("TIME", "ZONE"); err != nil {
				return nil, err
			}
		}
		dt := arrow.DataType(arrow.FixedWidthTypes.Time32ms)
		switch {
		case prec > 6:
			dt = arrow.FixedWidthTypes.Time64ns
		case prec > 3:
			dt = arrow.FixedWidthTypes.Time64us
		}
		return &Type{root: "TIME", text: fmt.Sprintf("TIME(%d)", prec), dt: dt}, nil
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		prec, err := p.optParam(6, 0, 9, kw+" precision")
		if err != nil {
			return nil, err
		}
		if kw == "TIMESTAMP" {
			switch {
			case p.accept("WITHOUT"):
				err = p.expect("TIME", "ZONE")
			case p.accept("WITH"):
				kw = "TIMESTAMP_LTZ"
				err = p.expect("LOCAL", "TIME", "ZONE")
			}
			if err != nil {
				return nil, err
			}
		}
		ts := &arrow.TimestampType{Unit: arrow.Nanosecond}
		switch {
		case prec <= 3:
			ts.Unit = arrow.Millisecond
		case prec <= 6:
			ts.Unit = arrow.Microsecond
		}
		if kw == "TIMESTAMP_LTZ" {
			ts.TimeZone = "UTC"
		}
		return &Type{root: kw, text: fmt.Sprintf("%s(%d)", kw, prec), dt: ts}, nil
	case "ARRAY":
		if err := p.expect("<"); err != nil {
			return nil, err
		}
		elem, nullable, err := p.parseElement(depth)
		if err != nil {
			return nil, err
		}
		if err := p.expect(">"); err != nil {
			return nil, err
		}
		return &Type{root: "ARRAY", text: "ARRAY<" + elementText(elem, nullable) + ">",
			dt: arrow.ListOfField(arrow.Field{Name: "item", Type: elem.dt, Nullable: nullable})}, nil
	case "MAP":
		if err := p.expect("<"); err != nil {
			return nil, err
		}
		key, _, err := p.parseElement(depth) // keys are NOT NULL whatever is written
		if err != nil {
			return nil, err
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
		val, nullable, err := p.parseElement(depth)
		if err != nil {
			return nil, err
		}
		if err := p.expect(">"); err != nil {
			return nil, err
		}
		return &Type{root: "MAP", text: "MAP<" + key.text + ", " + elementText(val, nullable) + ">",
			dt: arrow.MapOfFields(arrow.Field{Type: key.dt}, arrow.Field{Type: val.dt, Nullable: nullable})}, nil
	case "ROW":
		return p.parseRow(depth)
	}
	p.pos = start
	return nil, p.errorf("unknown type %s; the types are %s", errs.Quote(word), typeNames)
}

// parseRow parses the fields of ROW<name type, ...> (or ROW(...)).
func (p *parser) parseRow(depth int) (*Type, error) {
	closer := ">"
	if p.accept("(") {
		closer = ")"
	} else if err := p.expect("<"); err != nil {
		return nil, err
	}
	var fields []arrow.Field
	var texts []string
	seen := map[string]bool{}
	for {
		name := p.peek()
		if name == "" || !isWordByte(name[0]) {
			return nil, p.errorf("expected a ROW field name, found %s", describeToken(name))
		}
		p.next()
		if seen[name] {
			return nil, p.errorf("duplicate ROW field %s", errs.Quote(name))
		}
		seen[name] = true
		t, nullable, err := p.parseElement(depth)
		if err != nil {
			return nil, err
		}
		fields = append(fields, arrow.Field{Name: name, Type: t.dt, Nullable: nullable})
		texts = append(texts, name+" "+elementText(t, nullable))
		if !p.accept(",") {
			break
		}
	}
	if err := p.expect(closer); err != nil {
		return nil, err
	}
	return &Type{root: "ROW", text: "ROW<" + strings.Join(texts, ", ") + ">", dt: arrow.StructOf(fields...)}, nil
}

// parseElement parses a nested type with an optional NOT NULL / NULL suffix.
func (p *parser) parseElement(depth int) (*Type, bool, error) {
	t, err := p.parseType(depth + 1)
	if err != nil {
		return nil, false, err
	}
	if p.accept("NOT") {
		return t, false, p.expect("NULL")
	}
	p.accept("NULL")
	return t, true, nil
}

func elementText(t *Type, nullable bool) string {
	if nullable {
		return t.text
	}
	return t.text + " NOT NULL"
}

// optParam parses an optional "(n)" with n in [lo, hi].
func (p *parser) optParam(def, lo, hi int, what string) (int, error) {
	if !p.accept("(") {
		return def, nil
	}
	n, err := p.integer(lo, hi, what)
	if err != nil {
		return 0, err
	}
	return n, p.expect(")")
}

func (p *parser) integer(lo, hi int, what string) (int, error) {
	tok := p.peek()
	n, err := strconv.Atoi(tok)
	if err != nil || n < lo || n > hi {
		return 0, p.errorf("%s must be an integer from %d to %d, found %s", what, lo, hi, describeToken(tok))
	}
	p.next()
	return n, nil
}

func describeToken(tok string) string {
	if tok == "" {
		return "end of input"
	}
	return strconv.Quote(tok)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
