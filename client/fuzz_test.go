package client

import (
	"encoding/json"
	"testing"
)

// FuzzAppMetadata: app_metadata (of PutResults, scan batches and lookup
// answers), tickets and positions are bytes from the wire; their parsers
// accept them or return an error, never panic, and what parses survives a
// round trip through JSON.
func FuzzAppMetadata(f *testing.F) {
	for _, seed := range []string{
		`{"sequence":3,"rows":10,"buckets":{"0":5,"3":12}}`,
		`{"bucket":1,"start":0,"next":10,"high_watermark":12}`,
		`{"keys":4,"rows":3}`,
		`{"v":1,"table_id":7,"table":"fluss.orders","view":"log","bucket":0,"start":0,"stop":100,"columns":["a"],"filter":{"op":"eq"},"lake_snapshot_id":null,"limit":null}`,
		``, ` `, `null`, `[]`, `{"buckets":{"x":1}}`, `{"rows":"1"}`, `{"bucket":1e400}`, `earliest`, `latest`, `ts:5`, `0:3,1:4`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := ParsePutResult(b); err == nil {
			again, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParsePutResult(again); err != nil {
				t.Fatalf("re-encoded PutResult %s does not parse: %v", again, err)
			}
		}
		if m, ok, err := ParseBatchMeta(b); err == nil && ok {
			again, _ := json.Marshal(m)
			if m2, _, err := ParseBatchMeta(again); err != nil || m2 != m {
				t.Fatalf("re-encoded BatchMeta %s: %+v, %v; want %+v", again, m2, err, m)
			}
		}
		if m, err := ParseLookupMeta(b); err == nil {
			again, _ := json.Marshal(m)
			if m2, err := ParseLookupMeta(again); err != nil || m2 != m {
				t.Fatalf("re-encoded LookupMeta %s: %+v, %v; want %+v", again, m2, err, m)
			}
		}
		if tk, err := ParseTicket(b); err == nil {
			again, err := tk.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParseTicket(again); err != nil {
				t.Fatalf("re-encoded ticket %s does not parse: %v", again, err)
			}
		}
		_, _ = ParsePosition(string(b))
	})
}
