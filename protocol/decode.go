package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/fluxgate-io/fluxgate/errs"
)

// Limits on every JSON document a client sends (a descriptor command, an
// action body, a ticket), checked before it is decoded (PROTOCOL.md
// "Conventions"): MaxDocumentBytes of JSON, objects and arrays nested at
// most MaxDepth deep (the deepest predicate §4.4 allows, 64 predicates,
// takes 132 levels inside a command), and every string the document decodes
// into a request at most MaxStringBytes (filters and lookup keys aside,
// which their own parsers bound). MaxStringBytes is a backstop above every
// tighter limit of a field (names, ids, comments, options), which the code
// that knows the field checks with its own message.
const (
	MaxDocumentBytes = 2 << 20
	MaxDepth         = 160
	MaxStringBytes   = 64 << 10
)

// DecodeJSON decodes client JSON (a command, action body or ticket)
// strictly: an unknown field, a key given twice in one object, malformed
// JSON or a document over the limits above is errs.InvalidArgument naming what is
// wrong, so a typo never silently changes behaviour. Its memory is linear in
// the document's size.
func DecodeJSON(b []byte, what string, v any) error {
	if len(b) > MaxDocumentBytes {
		return errs.New(errs.InvalidArgument, "%s: %d bytes; the limit is %d", what, len(b), MaxDocumentBytes)
	}
	if err := checkShape(b); err != nil {
		return errs.New(errs.InvalidArgument, "%s: %v", what, err)
	}
	if err := strictUnmarshal(b, v); err != nil {
		if errs.KindOf(err) != errs.Internal {
			return err
		}
		return errs.New(errs.InvalidArgument, "%s: %v", what, err)
	}
	if err := checkStrings(reflect.ValueOf(v)); err != nil {
		return errs.New(errs.InvalidArgument, "%s: %v", what, err)
	}
	return nil
}

// strictUnmarshal decodes JSON, rejecting unknown fields and trailing data;
// its errors quote what they name of the document short (quoteShort).
// A type with its own UnmarshalJSON uses it for its fields too, since
// encoding/json does not pass DisallowUnknownFields down.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber() // a lookup key's BIGINT keeps digits a float64 would lose
	if err := dec.Decode(v); err != nil {
		return quoteShort(err)
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON object")
	}
	return nil
}

// quoteShort returns encoding/json's error with what it quotes of the
// document (an unknown field's name, a value of the wrong type) cut as
// errs.Quote cuts it.
func quoteShort(err error) error {
	const unknown = `json: unknown field `
	if msg := err.Error(); strings.HasPrefix(msg, unknown) {
		if name, uerr := strconv.Unquote(msg[len(unknown):]); uerr == nil {
			return errors.New(unknown + errs.Quote(name))
		}
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) && len(typ.Value) > errs.QuoteMax {
		short := *typ
		short.Value = strings.ToValidUTF8(typ.Value[:errs.QuoteMax], "") + "..."
		return &short
	}
	return err
}

// BucketOffsets reads a JSON object of bucket → offset. Only the canonical
// spelling of a bucket is accepted: "01" or "+1" would name bucket 1 a second
// time, one value silently replacing the other. what prefixes the errors
// ("undo offsets").
func BucketOffsets(in map[string]int64, what string) (map[int]int64, error) {
	out := make(map[int]int64, len(in))
	for k, v := range in {
		b, err := strconv.Atoi(k)
		if err != nil || b < 0 || strconv.Itoa(b) != k {
			return nil, errs.New(errs.InvalidArgument, "%s: %.64q is not a bucket number", what, k)
		}
		if v < 0 {
			return nil, errs.New(errs.InvalidArgument, "%s: offset %d of bucket %d is negative", what, v, b)
		}
		out[b] = v
	}
	return out, nil
}

// BucketKeys spells the buckets of offsets as the JSON keys of the protocol's
// bucket → offset objects.
func BucketKeys(offsets map[int]int64) map[string]int64 {
	if offsets == nil {
		return nil
	}
	out := make(map[string]int64, len(offsets))
	for b, o := range offsets {
		out[strconv.Itoa(b)] = o
	}
	return out
}

// checkShape refuses, in one pass over the tokens, a document nested deeper
// than MaxDepth or with an object that names a key twice, at any depth:
// encoding/json would keep the last value silently, where another parser
// might keep the first. It keeps each open object's keys and nothing else,
// so its memory is linear in the document; a path for the error is made only
// when there is one.
func checkShape(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()       // numbers are skipped, not converted
	var open []shapeFrame // the objects and arrays around the next token
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or malformed JSON: the decoder that follows says where
		}
		top := len(open) - 1
		if top >= 0 && open[top].object && open[top].expectKey && tok != json.Delim('}') {
			f := &open[top]
			key := tok.(string) // the tokenizer allows only strings as keys
			if _, twice := f.keys[key]; twice {
				return fmt.Errorf("key %s appears twice in %s", errs.Quote(key), shapePath(open[:top+1], false))
			}
			f.keys[key] = struct{}{}
			f.key, f.expectKey = key, false
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(open) == MaxDepth {
				return fmt.Errorf("nested deeper than %d levels at %s", MaxDepth, shapePath(open, true))
			}
			open = append(open, shapeFrame{object: tok == json.Delim('{'), expectKey: true})
			if f := &open[len(open)-1]; f.object {
				if f.keys == nil {
					f.keys = map[string]struct{}{}
				} else {
					clear(f.keys) // a map of an object closed at this depth before
				}
			}
			continue
		case json.Delim('}'), json.Delim(']'):
			open = open[:top]
		}
		// A value ended: an object's next token is a key again.
		if len(open) > 0 {
			open[len(open)-1].expectKey = true
		}
	}
}

// shapeFrame is an object or array that checkShape is inside.
type shapeFrame struct {
	object    bool
	keys      map[string]struct{} // an object's keys so far; kept for reuse once closed
	key       string              // the key whose value is being read
	expectKey bool
}

// shapePath spells where open's innermost value is, as $.scan.filter[]; with
// inner, the innermost frame's key or [] too. It is cut to a few hundred
// bytes: the document may nest MaxDepth deep.
func shapePath(open []shapeFrame, inner bool) string {
	var p strings.Builder
	p.WriteString("$")
	for i, f := range open {
		if i == len(open)-1 && !inner {
			break
		}
		if p.Len() > 256 {
			p.WriteString("...")
			break
		}
		if f.object {
			p.WriteString(pathStep(f.key))
		} else {
			p.WriteString("[]")
		}
	}
	return p.String()
}

// checkStrings refuses a decoded request that holds a string longer than
// MaxStringBytes: in a field, a list or a map's keys or values. Raw JSON
// (filters) and values of any type (lookup keys) are not looked into.
func checkStrings(v reflect.Value) error {
	switch v.Kind() {
	case reflect.String:
		if n := v.Len(); n > MaxStringBytes {
			return &longString{n: n, s: v.String()}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return checkStrings(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if err := checkStrings(v.Field(i)); err != nil {
				return err.(*longString).in(fieldName(f))
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 { // bytes and raw JSON
			return nil
		}
		for i := range v.Len() {
			if err := checkStrings(v.Index(i)); err != nil {
				return err.(*longString).in("[" + strconv.Itoa(i) + "]")
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if err := checkStrings(it.Key()); err != nil {
				return err.(*longString).in("{key}")
			}
			if err := checkStrings(it.Value()); err != nil {
				return err.(*longString).in(pathStep(fmt.Sprint(it.Key().Interface())))
			}
		}
	}
	return nil
}

// fieldName is the path step of a struct field: its JSON name, that of a
// field without a tag (which its type's own JSON spells so) in snake case,
// "" for an embedded one.
func fieldName(f reflect.StructField) string {
	if f.Anonymous {
		return ""
	}
	if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" {
		return "." + name
	}
	var b strings.Builder
	for i, c := range f.Name {
		if unicode.IsUpper(c) && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return "." + b.String()
}

// longString is checkStrings' error: the string and where it is.
type longString struct {
	n    int
	s    string
	path []string // innermost first
}

func (e *longString) in(step string) error {
	e.path = append(e.path, step)
	return e
}

func (e *longString) Error() string {
	path := "$"
	for i := len(e.path) - 1; i >= 0; i-- {
		path += e.path[i]
	}
	return fmt.Sprintf("%s: the string %s is %d bytes; the limit is %d", path, errs.Quote(e.s), e.n, MaxStringBytes)
}

// pathStep is the step to an object's member in a path: .name, or
// ["quoted"] for a key that is not a short plain name.
func pathStep(key string) string {
	plain := key != "" && len(key) <= errs.QuoteMax
	for _, c := range key {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			plain = false
			break
		}
	}
	if plain {
		return "." + key
	}
	return "[" + errs.Quote(key) + "]"
}
