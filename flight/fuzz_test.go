package flight

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/errs"
)

// FuzzCommand: descriptors are client bytes. Every decoder of them (reads,
// writes, lookups) accepts them or rejects them with a kinded error, never
// panics.
func FuzzCommand(f *testing.F) {
	for _, seed := range []string{
		`{"scan":{"table":"fluss.orders","columns":["a"],"startup":"earliest","stop":"latest","limit":5}}`,
		`{"scan":{"table":"t","startup":{"offsets":{"0":3}},"filter":{"op":"eq","column":"a","value":1}}}`,
		`{"write":{"table":"t","mode":"upsert","columns":["a","b"],"writer_id":"w","first_sequence":7}}`,
		`{"lookup":{"table":"t","columns":["a"],"prefix":true,"insert_if_not_exists":false,"keys":[[1]]}}`,
		`{"scan":{"table":"t"},"write":{"table":"t"}}`,
		`{}`, `null`, `[]`, `{"scan":null}`, `{"scan":{"table":1}}`, `{"nope":{}}`, ``,
	} {
		f.Add(uint8(2), []byte(seed), "")
	}
	f.Add(uint8(1), []byte(nil), "fluss/orders")
	f.Add(uint8(1), []byte(nil), "a/b/c")
	f.Add(uint8(0), []byte(`{}`), "")
	f.Fuzz(func(t *testing.T, typ uint8, cmd []byte, path string) {
		d := &flight.FlightDescriptor{Type: []flight.DescriptorType{flight.DescriptorUNKNOWN, flight.DescriptorPATH, flight.DescriptorCMD}[typ%3], Cmd: cmd}
		if path != "" {
			d.Path = strings.Split(path, "/")
		}
		kinded := func(what string, err error) {
			if err != nil && errs.KindOf(err) == errs.Internal {
				t.Fatalf("%s: unkinded error %v", what, err)
			}
		}
		if d.Type == flight.DescriptorCMD {
			_, err := parseCommand(d)
			kinded("parseCommand", err)
		}
		_, _, err := readRequest(d)
		kinded("readRequest", err)
		_, err = writeRequest(d)
		kinded("writeRequest", err)
		_, err = lookupRequest(d)
		kinded("lookupRequest", err)
	})
}

// actionSeeds are a good body or two of every action, naming the tables
// actionTables makes (db1.t, db1.l, db1.p).
var actionSeeds = map[string][]string{
	"create-database": {`{"database":"db1","if_not_exists":true}`},
	"drop-database":   {`{"database":"db1","if_exists":true,"cascade":true}`},
	"list-databases":  {`{}`},
	"create-table": {
		`{"table":"db1.t","columns":[{"name":"id","type":"BIGINT","nullable":false}],"primary_key":["id"],"options":{"bucket.num":"2"},"if_not_exists":true}`,
		`{"table":"db1.l","columns":[{"name":"a","type":"STRING"}],"options":{"bucket.num":"1"}}`,
	},
	"drop-table":                {`{"table":"db1.t","if_exists":true}`},
	"describe-table":            {`{"table":"db1.t"}`},
	"list-tables":               {`{"database":"db1"}`, `{}`},
	"alter-table":               {`{"table":"db1.l","set":{"table.log.ttl":"1h"},"reset":["x"],"add_columns":[{"name":"b","type":"INT"}]}`},
	"list-offsets":              {`{"table":"db1.l","at":"latest"}`, `{"table":"db1.l","at":{"timestamp":5},"buckets":[0]}`},
	"undo":                      {`{"table":"db1.t","offsets":{"0":0}}`},
	"writer-state":              {`{"table":"db1.l","writer_id":"w"}`, `{"table":"db1.t$changelog","writer_id":"w"}`},
	"table-stats":               {`{"table":"db1.t"}`, `{"table":"db1.l"}`},
	"lake-snapshot":             {`{"table":"db1.l"}`},
	"tier-now":                  {`{"table":"db1.l"}`},
	"compact-lake":              {`{"table":"db1.l"}`},
	"grant":                     {`{"principal":"bob","database":"*","operations":["read","write"]}`},
	"revoke":                    {`{"principal":"bob","database":"db1","table":"t","operations":["read"]}`},
	"list-grants":               {`{"principal":"bob"}`, `{}`},
	"create-partition":          {`{"table":"db1.p","partition":{"dt":"20261201"},"if_not_exists":true}`},
	"drop-partition":            {`{"table":"db1.p","partition":{"dt":"20261201"},"if_exists":true}`},
	"list-partitions":           {`{"table":"db1.p","partition":{"dt":"20261201"},"max_results":1}`},
	"register-producer-offsets": {`{"producer_id":"job-1","table":"db1.l","offsets":{"0":0}}`, `{"producer_id":"job-1","table":"db1.p","partition_offsets":{"20261201":{"0":0}}}`},
	"get-producer-offsets":      {`{"producer_id":"job-1","table":"db1.l"}`},
	"delete-producer-offsets":   {`{"producer_id":"job-1","table":"db1.l"}`},
}

// actionService is a Service with grants over a real engine that holds
// db1.t (primary key id), db1.l (a log table of a STRING) and db1.p
// (partitioned by dt, with partition 20261201).
func actionService(tb testing.TB) *Service {
	dir := tb.TempDir()
	eng, err := engine.Open(context.Background(), filepath.Join(dir, "data"), engine.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { eng.Close() })
	store, err := acl.Open(filepath.Join(dir, "acl.json"))
	if err != nil {
		tb.Fatal(err)
	}
	s := New(eng, Options{ACL: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for _, c := range []struct{ action, body string }{
		{"create-database", `{"database":"db1"}`},
		{"create-table", actionSeeds["create-table"][0]},
		{"create-table", actionSeeds["create-table"][1]},
		{"create-table", `{"table":"db1.p","columns":[{"name":"id","type":"BIGINT"},{"name":"dt","type":"STRING"}],"primary_key":["id","dt"],"partition_keys":["dt"]}`},
		{"create-partition", actionSeeds["create-partition"][0]},
	} {
		if _, err := actions[c.action].run(s, context.Background(), []byte(c.body)); err != nil {
			tb.Fatalf("%s %s: %v", c.action, c.body, err)
		}
	}
	return s
}

// FuzzActionBodies: action bodies are client bytes. Each action of the table
// is run on a real engine with the body: it succeeds or fails with a kinded
// error, never panics.
func FuzzActionBodies(f *testing.F) {
	names := make([]string, 0, len(actions))
	for name := range actions {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		for _, s := range actionSeeds[name] {
			f.Add(uint8(i), []byte(s))
		}
		for _, s := range []string{``, `null`, `[]`, `{"unknown":1}`, `{"table":7}`, `{"table":""}`, `{"database":"../x"}`} {
			f.Add(uint8(i), []byte(s))
		}
	}
	s := actionService(f)
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		name := names[int(which)%len(names)]
		_, err := actions[name].run(s, context.Background(), body)
		if err != nil && errs.KindOf(err) == errs.Internal {
			t.Fatalf("%s %q: unkinded error %v", name, body, err)
		}
	})
}

// FuzzPageToken: page tokens are client strings. One decodes only if this
// server could have made it for that listing: it is what encoding its key
// gives, so a made-up token is refused, and every made one round-trips.
func FuzzPageToken(f *testing.F) {
	f.Add(encodePageToken("db\x00orders", "list-tables"), "list-tables", "")
	f.Add(encodePageToken("fluss", "list-databases"), "list-tables", "fluss")
	f.Add("garbage", "list-databases", "bob\x00*\x00")
	f.Add("", "list-grants", "")
	f.Fuzz(func(t *testing.T, token, what, key string) {
		if got, err := decodePageToken(encodePageToken(key, what), what); err != nil || got != key {
			t.Fatalf("the token of %q for %s decodes to %q, %v", key, what, got, err)
		}
		got, err := decodePageToken(token, what)
		if err != nil {
			if errs.KindOf(err) != errs.Invalid {
				t.Fatalf("%q: %v, want INVALID_ARGUMENT", token, err)
			}
			return
		}
		if token != "" && encodePageToken(got, what) != token {
			t.Fatalf("%q decodes to %q for %s, which encodes to another token", token, got, what)
		}
	})
}
