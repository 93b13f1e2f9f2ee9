package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseTicket: tickets are client bytes; they decode or are rejected with
// a kinded error, never a panic, and what decodes re-encodes to a ticket that
// decodes the same.
func FuzzParseTicket(f *testing.F) {
	f.Add([]byte(`{"v":1,"table_id":7,"table":"fluss.orders","view":"log","bucket":0,"start":0,"stop":100,"columns":["a"],"lake_snapshot_id":null,"limit":null}`))
	f.Add([]byte(`{"v":1,"table_id":7,"view":"changelog","bucket":1,"start":5,"stop":null,"then":[{"bucket":2,"start":0,"stop":3}],"limit":10}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`{"v":1,"table_id":7,"view":"lookup","lookup":{"table":"t","keys":[{"k":9007199254740993}]}}`))
	f.Add([]byte(`{"v":1,"table_id":7,"view":"log","filter":` + strings.Repeat(`{"not":`, 200) + `{"is_null":"a"}` + strings.Repeat(`}`, 200) + `}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tk, err := ParseTicket(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(tk)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseTicket(again); err != nil {
			t.Fatalf("re-encoded ticket %s does not parse: %v", again, err)
		}
	})
}
