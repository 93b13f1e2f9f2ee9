package protocol

import (
	"bytes"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func readSchema(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSchemaValidatesVectors validates every valid JSON vector against its
// definition in schema.json.
func TestSchemaValidatesVectors(t *testing.T) {
	raw := readSchema(t)
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
