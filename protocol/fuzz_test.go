package protocol

import (
	"bytes"
	"encoding/json"
	"testing"
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
