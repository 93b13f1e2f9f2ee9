package catalog

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/fluxgate-io/fluxgate/errs"
)

// ParseType parses a Flink SQL type name (case-insensitive, PROTOCOL.md §2)
// into the Arrow type used on the wire.
func ParseType(s string) (arrow.DataType, error) {
	t, err := parseType(s)
	if err != nil {
		return nil, err
	}
	return t.arrow, nil
}

// CanonicalType returns the normalized spelling of a type: upper case, aliases
// resolved and default parameters written out (`timestamp` → `TIMESTAMP(6)`,
// `integer` → `INT`, `decimal` → `DECIMAL(10,0)`). Stored specs use it.
func CanonicalType(s string) (string, error) {
	t, err := parseType(s)
	if err != nil {
		return "", err
	}
	return t.text, nil
}

// sqlType is a parsed type: its root (the canonical keyword, e.g. "VARCHAR"),
// its canonical text and its Arrow type.
type sqlType struct {
	root  string
	text  string
	arrow arrow.DataType
}

func (t *sqlType) nested() bool { return t.root == "ARRAY" || t.root == "MAP" || t.root == "ROW" }

func (t *sqlType) numeric() bool {
	switch t.root {
	case "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL":
		return true
	}
	return false
}

// character reports Fluss's STRING and CHAR roots (VARCHAR(n) is a STRING there).
func (t *sqlType) character() bool {
	return t.root == "STRING" || t.root == "VARCHAR" || t.root == "CHAR"
}

// ordered reports the types that max and min accept.
func (t *sqlType) ordered() bool {
	switch t.root {
	case "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ":
		return true
	}
	return t.numeric() || t.character()
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

// maxTypeDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxTypeDepth = 32

func parseType(s string) (*sqlType, error) {
	p := &typeParser{src: s}
	t, err := p.parseType(0)
	if err == nil && p.peek() != "" {
		err = p.errorf("unexpected %q after the type", p.peek())
	}
	if err != nil {
		return nil, errs.New(errs.Invalid, "invalid type %q: %w", s, err)
	}
	return t, nil
}

// typeParser is a recursive-descent parser over identifiers, integers and the
// punctuation ( ) < > ,.
type typeParser struct {
	src string
	pos int
}

func (p *typeParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

// peek returns the next token without consuming it, "" at the end.
func (p *typeParser) peek() string {
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

func (p *typeParser) next() string {
	tok := p.peek()
	p.pos += len(tok)
	return tok
}

// accept consumes the next token if it equals tok, ignoring case.
func (p *typeParser) accept(tok string) bool {
	if strings.EqualFold(p.peek(), tok) {
		p.next()
		return true
	}
	return false
}

func (p *typeParser) expect(tok string) error {
	if !p.accept(tok) {
		return p.errorf("expected %q, found %s", tok, describeToken(p.peek()))
	}
	return nil
}

func (p *typeParser) parseType(depth int) (*sqlType, error) {
	if depth > maxTypeDepth {
		return nil, p.errorf("types nested deeper than %d levels", maxTypeDepth)
	}
	word := p.peek()
	if word == "" || !isWordByte(word[0]) {
		return nil, p.errorf("expected a type name, found %s", describeToken(word))
	}
	p.next()
	kw := strings.ToUpper(word)
	if dt, ok := simpleTypes[kw]; ok {
		if kw == "INTEGER" {
			kw = "INT"
		}
		return &sqlType{root: kw, text: kw, arrow: dt}, nil
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
		return &sqlType{root: "DECIMAL", text: fmt.Sprintf("DECIMAL(%d,%d)", prec, scale),
			arrow: &arrow.Decimal128Type{Precision: int32(prec), Scale: int32(scale)}}, nil
	case "VARCHAR", "CHAR", "VARBINARY", "BINARY":
		n, err := p.optParam(1, 1, 1<<31-1, kw+" length")
		if err != nil {
			return nil, err
		}
		dt := arrow.DataType(arrow.BinaryTypes.String)
		if strings.HasSuffix(kw, "BINARY") {
			dt = arrow.BinaryTypes.Binary
		}
		return &sqlType{root: kw, text: fmt.Sprintf("%s(%d)", kw, n), arrow: dt}, nil
	case "TIME":
		prec, err := p.optParam(0, 0, 9, "TIME precision")
		if err != nil {
			return nil, err
		}
		if p.accept("WITHOUT") {
			if err := p.expectWords("TIME", "ZONE"); err != nil {
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
		return &sqlType{root: "TIME", text: fmt.Sprintf("TIME(%d)", prec), arrow: dt}, nil
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		prec, err := p.optParam(6, 0, 9, kw+" precision")
		if err != nil {
			return nil, err
		}
		if kw == "TIMESTAMP" {
			switch {
			case p.accept("WITHOUT"):
				err = p.expectWords("TIME", "ZONE")
			case p.accept("WITH"):
				kw = "TIMESTAMP_LTZ"
				err = p.expectWords("LOCAL", "TIME", "ZONE")
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
		return &sqlType{root: kw, text: fmt.Sprintf("%s(%d)", kw, prec), arrow: ts}, nil
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
		return &sqlType{root: "ARRAY", text: "ARRAY<" + elementText(elem, nullable) + ">",
			arrow: arrow.ListOfField(arrow.Field{Name: "item", Type: elem.arrow, Nullable: nullable})}, nil
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
		return &sqlType{root: "MAP", text: "MAP<" + key.text + ", " + elementText(val, nullable) + ">",
			arrow: arrow.MapOfFields(arrow.Field{Type: key.arrow}, arrow.Field{Type: val.arrow, Nullable: nullable})}, nil
	case "ROW":
		return p.parseRow(depth)
	}
	return nil, p.errorf("unknown type %q", word)
}

// parseRow parses the fields of ROW<name type, ...> (or ROW(...)).
func (p *typeParser) parseRow(depth int) (*sqlType, error) {
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
			return nil, p.errorf("duplicate ROW field %q", name)
		}
		seen[name] = true
		t, nullable, err := p.parseElement(depth)
		if err != nil {
			return nil, err
		}
		fields = append(fields, arrow.Field{Name: name, Type: t.arrow, Nullable: nullable})
		texts = append(texts, name+" "+elementText(t, nullable))
		if !p.accept(",") {
			break
		}
	}
	if err := p.expect(closer); err != nil {
		return nil, err
	}
	return &sqlType{root: "ROW", text: "ROW<" + strings.Join(texts, ", ") + ">", arrow: arrow.StructOf(fields...)}, nil
}

// parseElement parses a nested type with an optional NOT NULL / NULL suffix.
func (p *typeParser) parseElement(depth int) (*sqlType, bool, error) {
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

func elementText(t *sqlType, nullable bool) string {
	if nullable {
		return t.text
	}
	return t.text + " NOT NULL"
}

// optParam parses an optional "(n)" with n in [lo, hi].
func (p *typeParser) optParam(def, lo, hi int, what string) (int, error) {
	if !p.accept("(") {
		return def, nil
	}
	n, err := p.integer(lo, hi, what)
	if err != nil {
		return 0, err
	}
	return n, p.expect(")")
}

func (p *typeParser) integer(lo, hi int, what string) (int, error) {
	tok := p.peek()
	n, err := strconv.Atoi(tok)
	if err != nil || n < lo || n > hi {
		return 0, p.errorf("%s must be an integer from %d to %d, found %s", what, lo, hi, describeToken(tok))
	}
	p.next()
	return n, nil
}

func (p *typeParser) expectWords(words ...string) error {
	for _, w := range words {
		if err := p.expect(w); err != nil {
			return err
		}
	}
	return nil
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
