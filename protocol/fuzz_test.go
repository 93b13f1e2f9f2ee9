package protocol

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fluxgate-io/fluxgate/errs"
)

// FuzzDecodeCommand: decoding never panics, and what decodes encodes to a
// fixed point (decoding and encoding it again changes nothing), so a client
// that re-encodes a command sends what the server read.
func FuzzDecodeCommand(f *testing.F) {
	for _, v := range readIndex(f).Vectors {
		if v.Type == "Command" {
			f.Add(readVector(f, v.File))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCommand(b)
		if err != nil {
			return
		}
		once, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("encode %+v: %v", c, err)
		}
		again, err := DecodeCommand(once)
		if err != nil {
			t.Fatalf("%s decoded, its encoding %s does not: %v", b, once, err)
		}
		twice, err := json.Marshal(again)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("encoding is no fixed point: %s, then %s (%v)", once, twice, err)
		}
	})
}

// FuzzScanRequest: scan requests (startup and stop included) decode or are
// rejected, never panic.
func FuzzScanRequest(f *testing.F) {
	f.Add([]byte(`{"table":"t","columns":["a"],"startup":{"timestamp":5},"stop":"none","buckets":[0],"limit":3}`))
	f.Add([]byte(`{"table":"t","startup":{"offsets":{"0":1,"2":9}},"stop":{"offsets":{"0":4}}}`))
	f.Add([]byte(`{"table":"t","startup":"latest"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var req ScanRequest
		_ = DecodeJSON(b, "scan", &req) // an error is a rejection, which is fine
	})
}

// FuzzDecodeJSON: every document a client sends, as every wire type, deep,
// wide or long. Decoding never panics; a refusal is INVALID_ARGUMENT with a
// short message (it quotes at most 64 bytes of any string); what decodes
// encodes to a document that decodes again.
func FuzzDecodeJSON(f *testing.F) {
	types := slices.Sorted(maps.Keys(wireTypes))
	for _, v := range readIndex(f).Vectors {
		if i := slices.Index(types, v.Type); i >= 0 && strings.HasPrefix(v.File, "json/") {
			f.Add(uint8(i), readVector(f, v.File))
		}
	}
	scan := uint8(slices.Index(types, "Command"))
	f.Add(scan, nestedFilter(MaxDepth-3)) // the deepest accepted
	f.Add(scan, nestedFilter(MaxDepth-2)) // one level too deep
	f.Add(scan, []byte(`{"scan":{"table":"t","startup":{"offsets":{"0":1,"0":2}}}}`))
	f.Add(scan, []byte(`{"lookup":{"table":"t","keys":[{"k":9007199254740993},{"k":"x","k":1}]}}`))
	f.Add(uint8(slices.Index(types, "Ticket")), []byte(`{"v":1,"table_id":1,"table":"t","view":"lookup","lookup":{"table":"t","keys":[[[[[]]]]]}}`))
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		typ := types[int(which)%len(types)]
		v, err := decodeVector(typ, b)
		if err != nil {
			if errs.KindOf(err) != errs.InvalidArgument {
				t.Fatalf("%s %q: %v, want INVALID_ARGUMENT", typ, b, err)
			}
			if len(err.Error()) > 1024 {
				t.Fatalf("%s: a message of %d bytes: %.200s", typ, len(err.Error()), err)
			}
			return
		}
		once, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: encode %+v: %v", typ, v, err)
		}
		if _, err := decodeVector(typ, once); err != nil && len(once) <= MaxDocumentBytes {
			t.Fatalf("%s: %q decoded, its encoding %s does not: %v", typ, b, once, err)
		}
	})
}
