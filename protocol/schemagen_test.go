package protocol

// schema.json is generated from the Go types: their JSON fields and which
// are always sent come from the structs, forms a struct cannot say (enums,
// minimums, the forms a position takes in each place) from the facts below.
// `go generate ./protocol` rewrites it; TestSchemaJSONIsGenerated fails while
// the checked-in file differs.

//go:generate go test -run TestSchemaJSONIsGenerated -update .

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite schema.json from the Go types")

// TestSchemaJSONIsGenerated regenerates schema.json and compares it with the
// checked-in file (go generate ./protocol writes it).
func TestSchemaJSONIsGenerated(t *testing.T) {
	got, err := generateSchema()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("schema.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("schema.json is not what the Go types generate: run go generate ./protocol")
	}
}

// obj is a JSON object that keeps its keys in order.
type obj []member

type member struct {
	key   string
	value any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (o obj) with(key string, value any) obj { return append(slices.Clip(o), member{key, value}) }

const (
	bucketKey     = `^(0|[1-9][0-9]*)$`                   // a bucket in canonical decimal
	partitionName = `^[A-Za-z0-9_-]+(\$[A-Za-z0-9_-]+)*$` // values joined by $
	tableField    = "database.table, or table in the default database fluss; a view adds $changelog or $lake"
)

func ref(name string) obj { return obj{{"$ref", "#/$defs/" + name}} }

func enum[S ~string](values ...S) obj { return obj{{"enum", values}} }

var (
	str         = obj{{"type", "string"}}
	integer     = obj{{"type", "integer"}}
	nonNegative = obj{{"type", "integer"}, {"minimum", 0}}
	null        = obj{{"type", "null"}}
)

func bucketMap(value obj, description string) obj {
	return obj{{"type", "object"}, {"propertyNames", obj{{"pattern", bucketKey}}},
		{"additionalProperties", value}, {"description", description}}
}

var bucketOffsets = bucketMap(nonNegative, "bucket (canonical decimal) → offset")

func arrayOf(items obj) obj { return obj{{"type", "array"}, {"items", items}} }

// nonNegativeFields are the integers (or their arrays, or pointers) that are
// never negative.
var nonNegativeFields = []string{
	"ScanRequest.buckets", "ScanRequest.limit", "WriteRequest.first_sequence",
	"OffsetsRequest.buckets", "TicketRange.bucket", "TicketRange.start", "TicketRange.stop",
	"Ticket.bucket", "Ticket.start", "Ticket.stop", "Ticket.limit", "Ticket.lake_start",
	"PlanMeta.buckets", "BatchMeta.bucket", "PutResult.rows", "LookupMeta.keys", "LookupMeta.rows",
	"PageRequest.max_results", "LakeCompaction.rewritten_files", "LakeCompaction.added_files",
	"LakeCompaction.removed_delete_files", "LakeCompaction.orphans_deleted", "UndoResult.undone_keys",
	"WriterState.next_sequence", "TableStats.row_count", "PartitionStats.row_count",
}

// fieldFacts are the fields whose schema is more than their Go type says.
var fieldFacts = map[string]obj{
	"ScanRequest.filter":           ref("Predicate"),
	"Ticket.filter":                ref("Predicate"),
	"ScanRequest.startup":          positionForms(startupRole),
	"ScanRequest.stop":             positionForms(stopRole),
	"OffsetsRequest.at":            positionForms(atRole),
	"ScanRequest.compression":      enum(Compressions...),
	"Ticket.compression":           enum(Compressions...),
	"WriteRequest.mode":            enum(ModeAppend, ModeUpsert, ModeDelete, ModeChangelog),
	"WriteRequest.merge_mode":      enum(MergeDefault, MergeOverwrite),
	"Ticket.v":                     obj{{"const", 1}},
	"Ticket.view":                  enum(ViewLog, ViewChangelog, ViewSnapshot, ViewLake, ViewUnion, ViewLookup),
	"Ticket.columns":               obj{{"anyOf", []obj{arrayOf(str), null}}},
	"TableInfo.kind":               enum(KindLog, KindPrimaryKey),
	"Index.name":                   enum(IndexPrimaryKey, IndexPrefix),
	"RegisterResult.result":        enum(RegisterCreated, RegisterAlreadyExists),
	"LookupRequest.keys":           arrayOf(obj{{"type", "object"}}),
	"TableStats.buckets":           bucketMap(nonNegative, "bucket (canonical decimal) → rows; absent on a partitioned table"),
	"PartitionStats.buckets":       bucketMap(nonNegative, "bucket (canonical decimal) → rows"),
	"Column.type":                  str.with("description", "a Flink SQL type name (PROTOCOL.md §2)"),
	"PartitionInfo.partition_name": str.with("description", "the values joined by $ in partition-key order"),
	"BatchMeta.snapshot":           obj{{"type", "boolean"}, {"description", "a snapshot's batch, which a read cannot resume inside; absent: false"}},
	// The operations of acl.Operations, which imports this package; acl's
	// tests compare the two.
	"Grant.operations": arrayOf(enum("read", "write", "create", "drop", "alter", "describe")),
}

// typeDescriptions say what a document is where its name does not.
var typeDescriptions = map[string]string{
	"Command":     "a CMD descriptor: exactly one request",
	"ScanRequest": "PROTOCOL.md §4.2", "WriteRequest": "PROTOCOL.md §5",
	"LookupRequest": "PROTOCOL.md §6; keys only in an inline lookup (GetFlightInfo)",
	"Ticket":        "PROTOCOL.md §4.3", "PlanMeta": "app_metadata of a scan's FlightInfo",
	"BatchMeta": "app_metadata of a scan's record batch", "PutResult": "app_metadata of DoPut's acknowledgement",
	"LookupMeta": "app_metadata of each message of a lookup answer; more: further messages of the same answer follow",
	"TableSpec":  "PROTOCOL.md §2", "TableInfo": "PROTOCOL.md §3",
	"Empty":         "the answer of actions that return nothing",
	"RoundFailure":  "why a table's tiering rounds fail (lake-snapshot, while they do)",
	"PartitionInfo": "a partition of a partitioned table",
}

// positionForms is the schema of a position where it takes role's forms.
func positionForms(role positionRole) obj {
	var words []PositionMode
	var forms []obj
	for _, m := range role.modes {
		switch m {
		case PositionTimestamp:
			forms = append(forms, single("timestamp", nonNegative))
		case PositionOffsets:
			forms = append(forms, single("offsets", bucketOffsets))
		case PositionPartitionOffsets:
			forms = append(forms, single("partition_offsets", ref("PartitionOffsets")))
		default:
			words = append(words, m)
		}
	}
	return obj{{"oneOf", append([]obj{enum(words...)}, forms...)}}
}

// single is an object of exactly one member.
func single(name string, value obj) obj {
	return obj{{"type", "object"}, {"properties", obj{{name, value}}},
		{"additionalProperties", false}, {"required", []string{name}}}
}

// schemaGen collects the $defs in the order they are first named.
type schemaGen struct {
	defs obj
	seen map[string]bool
	used map[string]bool // the facts' keys met, to refuse a stale one
}

func generateSchema() ([]byte, error) {
	g := &schemaGen{seen: map[string]bool{}, used: map[string]bool{}}
	g.define("Predicate", obj{{"description", "PROTOCOL.md §4.4; checked by the server against the table"},
		{"type", "object"}, {"minProperties", 1}, {"maxProperties", 1}})
	g.define("Position", obj{{"description", "PROTOCOL.md §4.2: a startup, a stop or list-offsets' at; each takes some of the forms; partition_offsets only on a partitioned table"}}.
		with("oneOf", positionForms(anyPosition)[0].value))
	g.define("PartitionOffsets", bucketMapOf(bucketOffsets, "a partitioned table's offsets: partition name → bucket → offset"))
	g.define("PartitionSpec", obj{{"type", "object"}, {"additionalProperties", str}, {"description", "partition key → value"}})
	var actions obj
	roots := []reflect.Type{typeOf[Command](), typeOf[Ticket](), typeOf[PlanMeta](), typeOf[BatchMeta](),
		typeOf[PutResult](), typeOf[LookupMeta](), typeOf[TableSpec](), typeOf[TableInfo]()}
	for _, a := range Actions {
		roots = append(roots, a.Body, a.Answer)
		actions = actions.with(a.Name, obj{{"description", a.Summary},
			{"body", "#/$defs/" + a.Body.Name()}, {"answer", "#/$defs/" + a.Answer.Name()}})
	}
	for _, t := range roots {
		if _, err := g.typeSchema(t, false); err != nil {
			return nil, err
		}
	}
	for _, key := range append(slices.Collect(maps.Keys(fieldFacts)), nonNegativeFields...) {
		if !g.used[key] {
			return nil, fmt.Errorf("a fact about %s, which is no field of a wire type", key)
		}
	}
	doc := obj{
		{"$schema", "https://json-schema.org/draft/2020-12/schema"},
		{"$id", "https://fluxgate.io/protocol/v1/schema.json"},
		{"title", "fluxgate wire protocol, version 1 (docs/PROTOCOL.md)"},
		{"description", "The JSON documents of the protocol by name: commands, tickets, app_metadata, and the body and answer of every action. Generated from the Go types of package protocol (go generate ./protocol); do not edit. The server also refuses a key given twice in one object, which JSON Schema cannot say. actions names each action's body and answer; systemColumns are the column names a table may not take."},
		{"actions", actions},
		{"systemColumns", SystemColumns},
		{"$defs", g.defs},
	}
	out, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func bucketMapOf(value obj, description string) obj {
	return obj{{"type", "object"}, {"propertyNames", obj{{"pattern", partitionName}}},
		{"additionalProperties", value}, {"description", description}}
}

func (g *schemaGen) define(name string, schema obj) {
	g.seen[name] = true
	g.defs = g.defs.with(name, schema)
}

var (
	rawMessageType   = typeOf[json.RawMessage]()
	positionType     = typeOf[Position]()
	partitionOffsets = []reflect.Type{typeOf[PartitionOffsets](), typeOf[RawPartitionOffsets]()}
)

// typeSchema is the schema of a Go type; required says that a pointer is
// always sent, so null where it is nil.
func (g *schemaGen) typeSchema(t reflect.Type, required bool) (obj, error) {
	switch {
	case t == positionType:
		return ref("Position"), nil
	case slices.Contains(partitionOffsets, t):
		return ref("PartitionOffsets"), nil
	case t == typeOf[PartitionSpec]():
		return ref("PartitionSpec"), nil
	case t == rawMessageType:
		return nil, fmt.Errorf("a json.RawMessage needs a fact")
	}
	switch t.Kind() {
	case reflect.Pointer:
		inner, err := g.typeSchema(t.Elem(), false)
		if required {
			return obj{{"anyOf", []obj{inner, null}}}, err
		}
		return inner, err
	case reflect.String:
		return str, nil
	case reflect.Bool:
		return obj{{"type", "boolean"}}, nil
	case reflect.Int, reflect.Int32, reflect.Int64:
		return integer, nil
	case reflect.Slice:
		items, err := g.typeSchema(t.Elem(), false)
		return arrayOf(items), err
	case reflect.Map:
		if t.Key().Kind() == reflect.Int || t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.Int64 {
			return bucketOffsets, nil // bucket → offset, the bucket as sent or as a number
		}
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String {
			return obj{{"type", "object"}, {"additionalProperties", str}}, nil
		}
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.Struct {
			value, err := g.typeSchema(t.Elem(), false)
			return bucketMapOf(value, "partition name → "+t.Elem().Name()), err
		}
	case reflect.Struct:
		if !g.seen[t.Name()] {
			g.seen[t.Name()] = true
			def, err := g.structSchema(t)
			if err != nil {
				return nil, err
			}
			g.define(t.Name(), def)
		}
		return ref(t.Name()), nil
	}
	return nil, fmt.Errorf("%s: no schema for this Go type", t)
}

// structSchema is a struct's object: its fields, no others, the ones Go
// always sends required. Command is one of its fields instead.
func (g *schemaGen) structSchema(t reflect.Type) (obj, error) {
	var def obj
	if d, ok := typeDescriptions[t.Name()]; ok {
		def = def.with("description", d)
	}
	var props obj
	var required []string
	var oneOf []obj
	for _, f := range WireFields(t) {
		s, err := g.fieldSchema(f)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", f.Owner.Name(), f.Name, err)
		}
		if t == typeOf[Command]() {
			oneOf = append(oneOf, single(f.Name, s))
			continue
		}
		props = props.with(f.Name, s)
		if !f.Omittable {
			required = append(required, f.Name)
		}
	}
	if oneOf != nil {
		return def.with("oneOf", oneOf), nil
	}
	def = def.with("type", "object").with("properties", props).with("additionalProperties", false)
	if required != nil {
		def = def.with("required", required)
	}
	return def, nil
}

func (g *schemaGen) fieldSchema(f WireField) (obj, error) {
	key := f.Owner.Name() + "." + f.Name
	g.used[key] = true
	if s, ok := fieldFacts[key]; ok {
		return s, nil
	}
	s, err := g.typeSchema(f.Type, !f.Omittable)
	if err != nil {
		return nil, err
	}
	if slices.Contains(nonNegativeFields, key) {
		s = withMinimum(s)
	}
	if f.Name == "table" && f.Type.Kind() == reflect.String {
		s = s.with("description", tableField)
	}
	return s, nil
}

// withMinimum makes the integers of s non-negative: s itself, an array's
// items or a nullable's integer.
func withMinimum(s obj) obj {
	out := slices.Clone(s)
	for i, m := range out {
		switch m.key {
		case "type":
			if m.value == "integer" {
				return append(out, member{"minimum", 0})
			}
		case "items":
			out[i].value = withMinimum(m.value.(obj))
		case "anyOf":
			alts := slices.Clone(m.value.([]obj))
			for j := range alts {
				alts[j] = withMinimum(alts[j])
			}
			out[i].value = alts
		}
	}
	return out
}
