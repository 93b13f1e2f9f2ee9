package protocol

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fluxgate-io/fluxgate/errs"
)

// vectorIndex is testdata/vectors.json: the shared vectors every client's
// tests decode and re-encode.
type vectorIndex struct {
	Version int    `json:"version"`
	About   string `json:"about"`
	// Opaque are the types clients pass on undecoded, with why.
	Opaque map[string]string `json:"opaque"`
	// NotSent lists, per client, the actions and body fields it never
	// sends, with why; its tests assert that it does not.
	NotSent map[string]struct {
		Actions map[string]string `json:"actions"`
		Fields  map[string]string `json:"fields"`
	} `json:"not_sent"`
	Vectors []vector      `json:"vectors"`
	Invalid []invalidCase `json:"invalid"`
}

type vector struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Type    string `json:"type"`
	File    string `json:"file"`
	Compare string `json:"compare"` // semantic, bytes or rows
	Action  string `json:"action"`
	// Of an IPC file: its table (a TableSpec vector), the columns of it the
	// batches hold (nil: all), rows and body compression.
	Table       string   `json:"table"`
	Columns     []string `json:"columns"`
	Rows        int64    `json:"rows"`
	Compression string   `json:"compression"`
}

type invalidCase struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	File    string `json:"file"`
	Error   string `json:"error"`
	Message string `json:"message"`
	Action  string `json:"action"`
	// ServerOnly says why a client's decoder need not refuse it: only the
	// server checks what makes it invalid.
	ServerOnly string `json:"server_only"`
}

// wireTypes are the protocol's JSON documents by the names the vectors use.
var wireTypes = map[string]func() any{
	"Command": func() any { return new(Command) }, "Ticket": func() any { return new(Ticket) },
	"PlanMeta": func() any { return new(PlanMeta) }, "BatchMeta": func() any { return new(BatchMeta) },
	"PutResult": func() any { return new(PutResult) }, "LookupMeta": func() any { return new(LookupMeta) },
	"TableSpec": func() any { return new(TableSpec) }, "TableInfo": func() any { return new(TableInfo) },
	"CreateDatabaseRequest":  func() any { return new(CreateDatabaseRequest) },
	"DatabaseResult":         func() any { return new(DatabaseResult) },
	"DropDatabaseRequest":    func() any { return new(DropDatabaseRequest) },
	"Empty":                  func() any { return new(Empty) },
	"ListDatabasesRequest":   func() any { return new(ListDatabasesRequest) },
	"ListDatabasesResult":    func() any { return new(ListDatabasesResult) },
	"CreateTableRequest":     func() any { return new(CreateTableRequest) },
	"DropTableRequest":       func() any { return new(DropTableRequest) },
	"TableRequest":           func() any { return new(TableRequest) },
	"ListTablesRequest":      func() any { return new(ListTablesRequest) },
	"ListTablesResult":       func() any { return new(ListTablesResult) },
	"AlterTableRequest":      func() any { return new(AlterTableRequest) },
	"OffsetsRequest":         func() any { return new(OffsetsRequest) },
	"OffsetsResult":          func() any { return new(OffsetsResult) },
	"LakeSnapshot":           func() any { return new(LakeSnapshot) },
	"LakeCompaction":         func() any { return new(LakeCompaction) },
	"UndoRequest":            func() any { return new(UndoRequest) },
	"UndoResult":             func() any { return new(UndoResult) },
	"ProducerOffsetsRequest": func() any { return new(ProducerOffsetsRequest) },
	"RegisterResult":         func() any { return new(RegisterResult) },
	"ProducerOffsets":        func() any { return new(ProducerOffsets) },
	"WriterStateRequest":     func() any { return new(WriterStateRequest) },
	"WriterState":            func() any { return new(WriterState) },
	"TableStatsRequest":      func() any { return new(TableStatsRequest) },
	"TableStats":             func() any { return new(TableStats) },
	"Grant":                  func() any { return new(Grant) },
	"ListGrantsRequest":      func() any { return new(ListGrantsRequest) },
	"ListGrantsResult":       func() any { return new(ListGrantsResult) },
	"PartitionInfo":          func() any { return new(PartitionInfo) },
	"CreatePartitionRequest": func() any { return new(CreatePartitionRequest) },
	"DropPartitionRequest":   func() any { return new(DropPartitionRequest) },
	"ListPartitionsRequest":  func() any { return new(ListPartitionsRequest) },
	"ListPartitionsResult":   func() any { return new(ListPartitionsResult) },
}

// readIndex reads testdata/vectors.json.
func readIndex(t testing.TB) vectorIndex {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx vectorIndex
	if err := DecodeJSON(b, "vectors.json", &idx); err != nil {
		t.Fatal(err)
	}
	if idx.Version != 1 || len(idx.Vectors) == 0 || len(idx.Invalid) == 0 {
		t.Fatalf("vectors.json: version %d, %d vectors, %d invalid", idx.Version, len(idx.Vectors), len(idx.Invalid))
	}
	return idx
}

func readVector(t testing.TB, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeVector decodes a document as the server decodes what a client sends:
// strictly, and a command with its check that it holds one request.
func decodeVector(typ string, b []byte) (any, error) {
	if typ == "Command" {
		c, err := DecodeCommand(b)
		return &c, err
	}
	v := wireTypes[typ]()
	return v, DecodeJSON(b, typ, v)
}

// canonical decodes JSON into plain values, so that two texts compare
// regardless of key order and spacing.
func canonical(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return v
}

// TestVectorsRoundTrip decodes every JSON vector with its protocol type and
// re-encodes it: equal as JSON values, or byte for byte where the vector is
// the server's exact encoding.
func TestVectorsRoundTrip(t *testing.T) {
	used := map[string]bool{}
	for _, v := range readIndex(t).Vectors {
		if v.Compare == "rows" {
			continue // Arrow IPC files: TestVectorBatches
		}
		t.Run(v.Name, func(t *testing.T) {
			if _, ok := wireTypes[v.Type]; !ok {
				t.Fatalf("type %q is not a protocol type", v.Type)
			}
			used[v.Type] = true
			in := readVector(t, v.File)
			got, err := decodeVector(v.Type, in)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			out, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			switch v.Compare {
			case "bytes":
				if want := bytes.TrimSpace(in); !bytes.Equal(out, want) {
					t.Errorf("re-encoded\n got: %s\nwant: %s", out, want)
				}
			case "semantic":
				if !reflect.DeepEqual(canonical(t, out), canonical(t, in)) {
					t.Errorf("re-encoded\n got: %s\nwant: %s", out, in)
				}
			default:
				t.Fatalf("compare %q: want semantic, bytes or rows", v.Compare)
			}
		})
	}
	for typ := range wireTypes {
		if !used[typ] {
			t.Errorf("no vector of %s", typ)
		}
	}
}

// TestVectorsInvalid checks that the server refuses every invalid vector as
// INVALID_ARGUMENT with the message the vector names.
func TestVectorsInvalid(t *testing.T) {
	for _, c := range readIndex(t).Invalid {
		t.Run(c.Name, func(t *testing.T) {
			if c.Error != "INVALID_ARGUMENT" {
				t.Fatalf("error %q: the vectors hold decoding errors, INVALID_ARGUMENT", c.Error)
			}
			_, err := decodeVector(c.Type, readVector(t, c.File))
			if errs.KindOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), c.Message) {
				t.Errorf("got %v (kind %v), want INVALID_ARGUMENT containing %q", err, errs.KindOf(err), c.Message)
			}
		})
	}
}

// TestVectorsOfActions checks that every action has a body and an answer
// vector, each of the type protocol.Actions names for it.
func TestVectorsOfActions(t *testing.T) {
	byName := map[string]Action{}
	for _, a := range Actions {
		byName[a.Name] = a
	}
	seen := map[string]bool{}
	for _, v := range readIndex(t).Vectors {
		if v.Action == "" {
			continue
		}
		a, ok := byName[v.Action]
		if !ok {
			t.Errorf("%s: action %q is not in Actions", v.Name, v.Action)
			continue
		}
		want := map[string]reflect.Type{"action_body": a.Body, "action_answer": a.Answer}[v.Kind]
		if want == nil || want.Name() != v.Type {
			t.Errorf("%s: a %s of type %s; Actions says %v", v.Name, v.Kind, v.Type, want)
		}
		seen[v.Kind+" "+v.Action] = true
	}
	for _, a := range Actions {
		for _, kind := range []string{"action_body", "action_answer"} {
			if !seen[kind+" "+a.Name] {
				t.Errorf("no %s vector of %s", kind, a.Name)
			}
		}
	}
}

// TestOpaqueVectorsAreTheServers: the types other clients' tests may leave
// undecoded are ones the server makes and clients pass on, byte for byte.
func TestOpaqueVectorsAreTheServers(t *testing.T) {
	idx := readIndex(t)
	if len(idx.Opaque) == 0 {
		t.Fatal("vectors.json lists no opaque type")
	}
	for typ, why := range idx.Opaque {
		if why == "" {
			t.Errorf("opaque %s: no reason given", typ)
		}
		n := 0
		for _, v := range idx.Vectors {
			if v.Type == typ {
				n++
				if v.Compare != "bytes" || v.Action != "" {
					t.Errorf("%s: an opaque %s must be the server's exact encoding, not sent by a client", v.Name, typ)
				}
			}
		}
		if n == 0 {
			t.Errorf("opaque %s: no vector of it", typ)
		}
	}
}

// TestNotSentNamesActions: what a client says it does not send are actions
// and body fields of the protocol, each with a reason.
func TestNotSentNamesActions(t *testing.T) {
	fields := map[string]bool{}
	actions := map[string]bool{}
	for _, a := range Actions {
		actions[a.Name] = true
		for _, f := range WireFields(a.Body) {
			fields[f.Name] = true
		}
	}
	for client, ns := range readIndex(t).NotSent {
		for name, why := range ns.Actions {
			if !actions[name] || why == "" {
				t.Errorf("%s does not send %q (%q): want an action and a reason", client, name, why)
			}
		}
		for name, why := range ns.Fields {
			if !fields[name] || why == "" {
				t.Errorf("%s does not send field %q (%q): want a body field and a reason", client, name, why)
			}
		}
	}
}
