package protocol

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaDoc is schema.json as plain JSON values, for walking.
type schemaDoc map[string]any

func readSchema(t *testing.T) (schemaDoc, []byte) {
	t.Helper()
	b, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc schemaDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc, b
}

func (d schemaDoc) def(name string) map[string]any {
	defs, _ := d["$defs"].(map[string]any)
	def, _ := defs[name].(map[string]any)
	return def
}

// properties lists a definition's properties, also those of its oneOf
// branches (a Command is one of three objects), and the ones it requires.
func (d schemaDoc) properties(def map[string]any) (props map[string]any, required []string) {
	props = map[string]any{}
	for _, s := range append([]any{def}, asSlice(def["oneOf"])...) {
		m, _ := s.(map[string]any)
		for k, v := range asMap(m["properties"]) {
			props[k] = v
		}
	}
	for _, r := range asSlice(def["required"]) {
		required = append(required, r.(string))
	}
	return props, required
}

// jsonTypes is what JSON types a schema allows; nil when it does not say
// (a predicate, a position).
func (d schemaDoc) jsonTypes(s any) []string {
	m := asMap(s)
	var out []string
	switch ty := m["type"].(type) {
	case string:
		out = append(out, ty)
	case []any:
		for _, x := range ty {
			out = append(out, x.(string))
		}
	}
	if ref, ok := m["$ref"].(string); ok {
		out = append(out, d.jsonTypes(d.def(strings.TrimPrefix(ref, "#/$defs/")))...)
	}
	for _, v := range asSlice(m["enum"]) {
		out = append(out, valueType(v))
	}
	if v, ok := m["const"]; ok {
		out = append(out, valueType(v))
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		for _, sub := range asSlice(m[key]) {
			out = append(out, d.jsonTypes(sub)...)
		}
	}
	if all := asSlice(m["allOf"]); len(all) > 0 {
		out = append(out, d.jsonTypes(all[0])...)
	}
	return out
}

func valueType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "integer"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "object"
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asSlice(v any) []any        { s, _ := v.([]any); return s }

// goField is one JSON field of a Go wire type.
type goField struct {
	name     string
	typ      reflect.Type
	required bool // always encoded (no omitempty or omitzero)
}

// jsonFields lists a struct's JSON fields, those of embedded structs too.
func jsonFields(t reflect.Type) []goField {
	var out []goField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		out = append(out, goField{name, f.Type, !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero")})
	}
	return out
}

var (
	rawMessage = reflect.TypeFor[json.RawMessage]()
	position   = reflect.TypeFor[Position]()
)

// goJSONTypes is what JSON types a Go field encodes to; nil when its own
// marshaller decides.
func goJSONTypes(t reflect.Type, required bool) []string {
	if t == rawMessage || t == position {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		inner := goJSONTypes(t.Elem(), true)
		if required {
			return append(inner, "null")
		}
		return inner
	case reflect.String:
		return []string{"string"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return []string{"integer"}
	case reflect.Bool:
		return []string{"boolean"}
	case reflect.Slice:
		if required {
			return []string{"array", "null"} // a nil slice is null
		}
		return []string{"array"}
	case reflect.Map, reflect.Struct:
		return []string{"object"}
	}
	return []string{"unknown " + t.String()}
}

// TestSchemaMatchesGoTypes checks every JSON field of every wire type
// against schema.json: present, of the right JSON type, and required there
// exactly when Go always encodes it; and that the schema has no field Go
// lacks.
func TestSchemaMatchesGoTypes(t *testing.T) {
	doc, _ := readSchema(t)
	types := map[string]reflect.Type{
		"ScanRequest": reflect.TypeFor[ScanRequest](), "WriteRequest": reflect.TypeFor[WriteRequest](),
		"LookupRequest": reflect.TypeFor[LookupRequest](), "TicketRange": reflect.TypeFor[TicketRange](),
		"Column": reflect.TypeFor[Column](), "Index": reflect.TypeFor[Index](),
	}
	for name, mk := range wireTypes {
		types[name] = reflect.TypeOf(mk()).Elem()
	}
	for name, typ := range types {
		def := doc.def(name)
		if def == nil {
			t.Errorf("schema.json has no $defs/%s", name)
			continue
		}
		props, required := doc.properties(def)
		seen := map[string]bool{}
		for _, f := range jsonFields(typ) {
			seen[f.name] = true
			prop, ok := props[f.name]
			if !ok {
				t.Errorf("%s.%s: not in the schema", name, f.name)
				continue
			}
			// A required slice may be null in Go but is an array on the
			// wire: compare without the null of nil slices.
			want := goJSONTypes(f.typ, f.required)
			got := doc.jsonTypes(prop)
			for _, w := range want {
				if w == "null" && f.typ.Kind() == reflect.Slice {
					continue
				}
				if len(got) > 0 && !slices.Contains(got, w) {
					t.Errorf("%s.%s: Go encodes %s, the schema allows %v", name, f.name, w, got)
				}
			}
			if f.required != slices.Contains(required, f.name) {
				t.Errorf("%s.%s: required in Go %v, in the schema %v", name, f.name, f.required, !f.required)
			}
		}
		for p := range props {
			if !seen[p] {
				t.Errorf("%s: the schema's %q is no field of the Go type", name, p)
			}
		}
	}
}

// TestSchemaValidatesVectors validates every valid JSON vector against its
// definition in schema.json.
func TestSchemaValidatesVectors(t *testing.T) {
	_, raw := readSchema(t)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://fluxgate.io/protocol/v1/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	for _, v := range readIndex(t).Vectors {
		if v.Compare == "rows" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			sch, err := c.Compile(url + "#/$defs/" + v.Type)
			if err != nil {
				t.Fatal(err)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(readVector(t, v.File)))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(inst); err != nil {
				t.Errorf("%s does not validate against $defs/%s: %v", v.File, v.Type, err)
			}
		})
	}
}
