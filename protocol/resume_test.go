package protocol

import (
	"encoding/json"
	"reflect"
	"testing"
)

// resumeCase is a case of testdata/resume.json, which the Java and Python
// clients' tests read too.
type resumeCase struct {
	Name   string          `json:"name"`
	Ticket json.RawMessage `json:"ticket"`
	Last   *BatchMeta      `json:"last"`
	Rows   int64           `json:"rows"`
	Want   json.RawMessage `json:"want"`
	Error  bool            `json:"error"`
}

func TestResumeTicket(t *testing.T) {
	var doc struct {
		About      string          `json:"about"`
		StreamEnds json.RawMessage `json:"stream_ends"` // the clients' (client.endedIdle)
		Cases      []resumeCase    `json:"cases"`
	}
	if err := DecodeJSON(readVector(t, "resume.json"), "resume.json", &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) == 0 {
		t.Fatal("resume.json has no cases")
	}
	for _, c := range doc.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var tk Ticket
			if err := DecodeJSON(c.Ticket, "ticket", &tk); err != nil {
				t.Fatal(err)
			}
			got, more, err := ResumeTicket(tk, c.Last, c.Rows)
			switch {
			case c.Error:
				if err == nil {
					t.Fatalf("resumed as %+v, want an error", got)
				}
				return
			case err != nil:
				t.Fatal(err)
			case string(c.Want) == "null":
				if more {
					t.Fatalf("resumed as %+v, want nothing left", got)
				}
				return
			case !more:
				t.Fatal("nothing left, want a ticket")
			}
			out, err := got.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if g, w := withoutDefaults(canonical(t, out)), withoutDefaults(canonical(t, c.Want)); !reflect.DeepEqual(g, w) {
				t.Errorf("resumed\n got: %s\nwant: %s", out, c.Want)
			}
		})
	}
}

// withoutDefaults drops the members that hold a default (null, false, an
// empty array or object), as the vectors compare documents.
func withoutDefaults(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withoutDefaults(x)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			x = withoutDefaults(x)
			switch x := x.(type) {
			case nil:
				continue
			case bool:
				if !x {
					continue
				}
			case []any:
				if len(x) == 0 {
					continue
				}
			case map[string]any:
				if len(x) == 0 {
					continue
				}
			}
			out[k] = x
		}
		return out
	}
	return v
}
