package flight

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/errs"
)

// commandSeeds are good descriptor commands of the tables actionService
// makes: scans with filters, positions and partitions, inline lookups, writes.
var commandSeeds = []string{
	`{"scan":{"table":"db1.l","columns":["a"],"filter":{"and":[{"eq":["a","x"]},{"starts_with":["a","p"]},{"in":["a",["x","y"]]}]},"compression":"zstd"}}`,
	`{"scan":{"table":"db1.p$changelog","partitions":["20261201"],"startup":{"partition_offsets":{"20261201":{"0":0}}},"stop":"latest"}}`,
	`{"scan":{"table":"db1.t$changelog","startup":{"offsets":{"0":0}},"buckets":[0]}}`,
	`{"lookup":{"table":"db1.t","columns":["id"],"keys":[{"id":1}]}}`,
	`{"lookup":{"table":"db1.p","insert_if_not_exists":false,"keys":[{"id":1,"dt":"20261201"}]}}`,
	`{"write":{"table":"db1.t","mode":"upsert","columns":["id"],"merge_mode":"overwrite","writer_id":"w","first_sequence":1}}`,
	`{"write":{"table":"db1.l","mode":"append","writer_id":"w"}}`,
}

// seedTickets are the tickets of the read commands of commandSeeds.
func seedTickets(tb testing.TB, s *Service) []string {
	var tickets []string
	for _, cmd := range commandSeeds {
		if strings.HasPrefix(cmd, `{"write"`) {
			continue
		}
		info, err := s.flightInfo(context.Background(), "GetFlightInfo", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(cmd)})
		if err != nil {
			tb.Fatalf("%s: %v", cmd, err)
		}
		tickets = append(tickets, string(info.Endpoint[0].Ticket.Ticket))
	}
	return tickets
}

// checkRefusal fails a fuzz input whose error is unkinded (a bug's
// INTERNAL) or echoes the input at length.
func checkRefusal(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errs.KindOf(err) == errs.Internal {
		t.Fatalf("%s: unkinded error %v", what, err)
	}
	if len(err.Error()) > 1024 {
		t.Fatalf("%s: a message of %d bytes: %.300s", what, len(err.Error()), err)
	}
}

// FuzzCommand: descriptors are client bytes. Every decoder of them (reads,
// writes, lookups) and the planning behind it, on a real engine, accepts
// them or refuses them with a kinded, short error; it never panics.
func FuzzCommand(f *testing.F) {
	for _, seed := range append(slices.Clone(commandSeeds),
		`{"scan":{"table":"db1.l","filter":`+strings.Repeat(`{"not":`, 70)+`{"is_null":"a"}`+strings.Repeat(`}`, 70)+`}}`,
		`{"scan":{"table":"db1.l","filter":`+strings.Repeat(`{"not":`, 200)+`{"is_null":"a"}`+strings.Repeat(`}`, 200)+`}}`,
		`{"scan":{"table":"fluss.orders","columns":["a"],"startup":"earliest","stop":"latest","limit":5}}`,
		`{"scan":{"table":"t","startup":{"offsets":{"0":3}},"filter":{"op":"eq","column":"a","value":1}}}`,
		`{"lookup":{"table":"t","columns":["a"],"prefix":true,"insert_if_not_exists":false,"keys":[[1]]}}`,
		`{"scan":{"table":"t"},"write":{"table":"t"}}`,
		`{}`, `null`, `[]`, `{"scan":null}`, `{"scan":{"table":1}}`, `{"nope":{}}`, ``,
	) {
		f.Add(uint8(2), []byte(seed), "")
	}
	f.Add(uint8(1), []byte(nil), "db1/l")
	f.Add(uint8(1), []byte(nil), "a/b/c")
	f.Add(uint8(0), []byte(`{}`), "")
	s := actionService(f)
	f.Fuzz(func(t *testing.T, typ uint8, cmd []byte, path string) {
		d := &flight.FlightDescriptor{Type: []flight.DescriptorType{flight.DescriptorUNKNOWN, flight.DescriptorPATH, flight.DescriptorCMD}[typ%3], Cmd: cmd}
		if path != "" {
			d.Path = strings.Split(path, "/")
		}
		if d.Type == flight.DescriptorCMD {
			_, err := parseCommand(d)
			checkRefusal(t, "parseCommand", err)
		}
		_, err := s.flightInfo(context.Background(), "GetFlightInfo", d)
		checkRefusal(t, "GetFlightInfo", err)
		req, err := writeRequest(d)
		if err == nil {
			_, err = s.eng.OpenWrite(req)
		}
		checkRefusal(t, "DoPut", err)
		_, err = lookupRequest(d)
		checkRefusal(t, "DoExchange", err)
	})
}

// FuzzTicket: tickets are client bytes, and a client may build its own.
// Redeeming one on a real engine (a scan of any view, a partition's range,
// an inline lookup) reads or refuses it with a kinded, short error; it never
// panics.
func FuzzTicket(f *testing.F) {
	s := actionService(f)
	for _, tk := range seedTickets(f, s) {
		f.Add([]byte(tk))
	}
	f.Add([]byte(`{"v":1,"table_id":1,"table":"db1.t","view":"lookup","lookup":{"table":"db1.t","keys":[{"id":9007199254740993}]}}`))
	f.Add([]byte(`{"v":1,"table_id":2,"table":"db1.l","view":"log","bucket":0,"start":0,"stop":null,"filter":` + strings.Repeat(`{"not":`, 70) + `{"is_null":"a"}` + strings.Repeat(`}`, 70) + `}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// A ticket without a stop follows the table: read what is there.
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := redeemTicket(ctx, s, b)
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return
		}
		checkRefusal(t, "DoGet", err)
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
		if _, err := handlers[c.action](s, context.Background(), []byte(c.body)); err != nil {
			tb.Fatalf("%s %s: %v", c.action, c.body, err)
		}
	}
	return s
}

// FuzzActionBodies: action bodies are client bytes. Each action of the table
// is run on a real engine with the body: it succeeds or fails with a kinded
// error, never panics.
func FuzzActionBodies(f *testing.F) {
	names := make([]string, 0, len(handlers))
	for name := range handlers {
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
		_, err := handlers[name](s, context.Background(), body)
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
			if errs.KindOf(err) != errs.InvalidArgument {
				t.Fatalf("%q: %v, want INVALID_ARGUMENT", token, err)
			}
			return
		}
		if token != "" && encodePageToken(got, what) != token {
			t.Fatalf("%q decodes to %q for %s, which encodes to another token", token, got, what)
		}
	})
}
