package client

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// ArrowType returns the Arrow type on the wire of a Flink SQL type name
// (PROTOCOL.md §2, case-insensitive): VARCHAR(n) and CHAR(n) are utf8,
// TIMESTAMP(p) a zoneless timestamp with its unit chosen by p (default 6),
// TIMESTAMP_LTZ(p) the same with zone "UTC", DECIMAL(p,s) decimal128(p,s),
// ARRAY<t>, MAP<k,v> and ROW<name t, ...> list, map and struct.
func ArrowType(sqlType string) (arrow.DataType, error) {
	p := &typeParser{src: sqlType}
	dt, err := p.parseType(0)
	if err == nil {
		if tok := p.peek(); tok != "" {
			err = fmt.Errorf("unexpected %q after the type", tok)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("type %q: %w", sqlType, err)
	}
	return dt, nil
}

// ArrowSchema returns the Arrow schema of the table's columns, as the server
// sends and expects them.
func (t *TableInfo) ArrowSchema() (*arrow.Schema, error) { return t.TableSpec.ArrowSchema() }

// ArrowSchema returns the Arrow schema of the spec's columns. Primary-key
// columns are not nullable.
func (s *TableSpec) ArrowSchema() (*arrow.Schema, error) {
	pk := map[string]bool{}
	for _, k := range s.PrimaryKey {
		pk[k] = true
	}
	fields := make([]arrow.Field, len(s.Columns))
	for i, c := range s.Columns {
		dt, err := ArrowType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: dt, Nullable: !c.NotNull && !pk[c.Name]}
	}
	return arrow.NewSchema(fields, nil), nil
}

const maxTypeDepth = 32

// typeParser is a recursive-descent parser over words, integers and the
// punctuation ( ) < > ,.
type typeParser struct {
	src string
	pos int
}

func (p *typeParser) peek() string {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
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
		end++
	}
	return p.src[p.pos:end]
}

func (p *typeParser) next() string {
	tok := p.peek()
	p.pos += len(tok)
	return tok
}

func (p *typeParser) accept(tok string) bool {
	if strings.EqualFold(p.peek(), tok) {
		p.next()
		return true
	}
	return false
}

func (p *typeParser) expect(toks ...string) error {
	for _, tok := range toks {
		if !p.accept(tok) {
			found := p.peek()
			if found == "" {
				found = "end of input"
			} else {
				found = strconv.Quote(found)
			}
			return fmt.Errorf("expected %q at offset %d, found %s", tok, p.pos, found)
		}
	}
	return nil
}

// param parses an optional "(n)" with n in [lo, hi].
func (p *typeParser) param(def, lo, hi int, what string) (int, error) {
	if !p.accept("(") {
		return def, nil
	}
	n, err := p.int(lo, hi, what)
	if err != nil {
		return 0, err
	}
	return n, p.expect(")")
}

func (p *typeParser) int(lo, hi int, what string) (int, error) {
	tok := p.peek()
	n, err := strconv.Atoi(tok)
	if err != nil || n < lo || n > hi || strings.ContainsAny(tok, "+-") {
		return 0, fmt.Errorf("%s must be an integer from %d to %d, found %q", what, lo, hi, tok)
	}
	p.next()
	return n, nil
}

func (p *typeParser) parseType(depth int) (arrow.DataType, error) {
	if depth > maxTypeDepth {
		return nil, fmt.Errorf("types nested deeper than %d levels", maxTypeDepth)
	}
	word := p.next()
	if word == "" || !isWordByte(word[0]) {
		return nil, fmt.Errorf("expected a type name, found %q", word)
	}
	switch kw := strings.ToUpper(word); kw {
	case "BOOLEAN":
		return arrow.FixedWidthTypes.Boolean, nil
	case "TINYINT":
		return arrow.PrimitiveTypes.Int8, nil
	case "SMALLINT":
		return arrow.PrimitiveTypes.Int16, nil
	case "INT", "INTEGER":
		return arrow.PrimitiveTypes.Int32, nil
	case "BIGINT":
		return arrow.PrimitiveTypes.Int64, nil
	case "FLOAT":
		return arrow.PrimitiveTypes.Float32, nil
	case "DOUBLE":
		p.accept("PRECISION")
		return arrow.PrimitiveTypes.Float64, nil
	case "STRING":
		return arrow.BinaryTypes.String, nil
	case "BYTES":
		return arrow.BinaryTypes.Binary, nil
	case "DATE":
		return arrow.FixedWidthTypes.Date32, nil
	case "VARCHAR", "CHAR":
		if _, err := p.param(1, 1, 1<<31-1, kw+" length"); err != nil {
			return nil, err
		}
		return arrow.BinaryTypes.String, nil
	case "VARBINARY", "BINARY":
		if _, err := p.param(1, 1, 1<<31-1, kw+" length"); err != nil {
			return nil, err
		}
		return arrow.BinaryTypes.Binary, nil
	case "DECIMAL", "DEC", "NUMERIC":
		prec, scale := 10, 0
		if p.accept("(") {
			var err error
			if prec, err = p.int(1, 38, "DECIMAL precision"); err != nil {
				return nil, err
			}
			if p.accept(",") {
				if scale, err = p.int(0, prec, "DECIMAL scale"); err != nil {
					return nil, err
				}
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
		}
		return &arrow.Decimal128Type{Precision: int32(prec), Scale: int32(scale)}, nil
	case "TIME":
		prec, err := p.param(0, 0, 9, "TIME precision")
		if err != nil {
			return nil, err
		}
		if p.accept("WITHOUT") {
			if err := p.expect("TIME", "ZONE"); err != nil {
				return nil, err
			}
		}
		switch {
		case prec > 6:
			return arrow.FixedWidthTypes.Time64ns, nil
		case prec > 3:
			return arrow.FixedWidthTypes.Time64us, nil
		}
		return arrow.FixedWidthTypes.Time32ms, nil
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		prec, err := p.param(6, 0, 9, kw+" precision")
		if err != nil {
			return nil, err
		}
		ltz := kw == "TIMESTAMP_LTZ"
		if !ltz {
			switch {
			case p.accept("WITHOUT"):
				err = p.expect("TIME", "ZONE")
			case p.accept("WITH"):
				ltz = true
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
		if ltz {
			ts.TimeZone = "UTC"
		}
		return ts, nil
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
		return arrow.ListOfField(arrow.Field{Name: "item", Type: elem, Nullable: nullable}), nil
	case "MAP":
		if err := p.expect("<"); err != nil {
			return nil, err
		}
		key, _, err := p.parseElement(depth) // map keys are never null
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
		return arrow.MapOfFields(arrow.Field{Type: key}, arrow.Field{Type: val, Nullable: nullable}), nil
	case "ROW":
		return p.parseRow(depth)
	}
	return nil, fmt.Errorf("unknown type %q", word)
}

func (p *typeParser) parseRow(depth int) (arrow.DataType, error) {
	closer := ">"
	if p.accept("(") {
		closer = ")"
	} else if err := p.expect("<"); err != nil {
		return nil, err
	}
	var fields []arrow.Field
	seen := map[string]bool{}
	for {
		name := p.next()
		if name == "" || !isWordByte(name[0]) {
			return nil, fmt.Errorf("expected a ROW field name, found %q", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("duplicate ROW field %q", name)
		}
		seen[name] = true
		dt, nullable, err := p.parseElement(depth)
		if err != nil {
			return nil, err
		}
		fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: nullable})
		if !p.accept(",") {
			break
		}
	}
	if err := p.expect(closer); err != nil {
		return nil, err
	}
	return arrow.StructOf(fields...), nil
}

// parseElement parses a nested type with an optional NOT NULL / NULL suffix.
func (p *typeParser) parseElement(depth int) (arrow.DataType, bool, error) {
	dt, err := p.parseType(depth + 1)
	if err != nil {
		return nil, false, err
	}
	if p.accept("NOT") {
		return dt, false, p.expect("NULL")
	}
	p.accept("NULL")
	return dt, true, nil
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
