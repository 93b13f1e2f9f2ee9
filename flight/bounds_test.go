package flight_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// wantInvalid asserts INVALID_ARGUMENT whose message contains every part.
func wantInvalid(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("%s: got %v, want INVALID_ARGUMENT", what, err)
	}
	for _, p := range parts {
		if !strings.Contains(status.Convert(err).Message(), p) {
			t.Errorf("%s: message %q does not mention %q", what, status.Convert(err).Message(), p)
		}
	}
}

// plainFlight is a Flight client with gRPC's defaults, as pyarrow's: it
// accepts answers of at most 4 MiB.
func plainFlight(t *testing.T, ts *testServer) flight.Client {
	t.Helper()
	fc, err := flight.NewClientWithMiddleware(ts.addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fc.Close() })
	return fc
}

// doAction runs an action with a raw body and returns its one result.
func doAction(t *testing.T, fc flight.Client, name, body string) ([]byte, error) {
	t.Helper()
	stream, err := fc.DoAction(ctxT(t), &flight.Action{Type: name, Body: []byte(body)})
	if err != nil {
		return nil, err
	}
	res, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	return res.Body, flight.ReadUntilEOF(stream)
}

// redeem opens a ticket and reads the stream to its end.
func redeem(t *testing.T, fc flight.Client, ticket string) error {
	t.Helper()
	stream, err := fc.DoGet(ctxT(t), &flight.Ticket{Ticket: []byte(ticket)})
	if err != nil {
		return err
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func TestStrictInput(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	info, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 2, "order_id"), false)
	if err != nil {
		t.Fatal(err)
	}
	fc := ts.cl.Flight()
	ticket := func(extra string) string {
		return fmt.Sprintf(`{"v": 1, "table_id": %d, "table": "fluss.orders", "view": "log", "bucket": 0, "start": 0, "stop": 0%s}`, info.TableID, extra)
	}
	if err := redeem(t, fc, ticket("")); err != nil {
		t.Fatalf("a good ticket: %v", err)
	}
	scan := func(req string) error {
		_, err := fc.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"scan": ` + req + `}`)})
		return err
	}

	wantInvalid(t, "ticket compression xz", redeem(t, fc, ticket(`, "compression": "xz"`)), `"xz"`, "none, lz4_frame, zstd")
	wantInvalid(t, "scan compression xz", scan(`{"table": "orders", "compression": "xz"}`), `"xz"`, "none, lz4_frame, zstd")
	wantInvalid(t, "startup offsets of bucket 99", scan(`{"table": "orders", "startup": {"offsets": {"0": 0, "99": 0}}}`), "startup offsets", "bucket 99", "0 to 1")
	wantInvalid(t, "stop offsets of bucket 99", scan(`{"table": "orders", "stop": {"offsets": {"99": 0}}}`), "stop offsets", "bucket 99")
	wantInvalid(t, "bucket 1 named twice", scan(`{"table": "orders", "startup": {"offsets": {"1": 0, "01": 5}}}`), `"01" is not a bucket number`)

	// A range error prints the offsets, not a Go pointer.
	err = redeem(t, fc, fmt.Sprintf(`{"v": 1, "table_id": %d, "table": "fluss.orders", "view": "log", "bucket": 0, "start": 5, "stop": 3}`, info.TableID))
	wantInvalid(t, "stop below start", err, "start 5, stop 3")
	if strings.Contains(status.Convert(err).Message(), "0x") {
		t.Errorf("message %q prints a pointer", status.Convert(err).Message())
	}

	// A key given twice, in every kind of client JSON and at any depth.
	wantInvalid(t, "ticket", redeem(t, fc, ticket(`, "bucket": 1`)), `key "bucket" appears twice`)
	wantInvalid(t, "command", scan(`{"table": "orders", "table": "other"}`), `key "table" appears twice in $.scan`)
	wantInvalid(t, "nested", scan(`{"table": "orders", "startup": {"offsets": {"0": 0, "0": 5}}}`), `key "0" appears twice in $.scan.startup.offsets`)
	wantInvalid(t, "filter", scan(`{"table": "orders", "filter": {"and": [{"eq": ["order_id", 1], "eq": ["order_id", 2]}]}}`), `key "eq" appears twice`)
	_, err = doAction(t, fc, "create-database", `{"database": "a", "database": "b"}`)
	wantInvalid(t, "action body", err, `key "database" appears twice`)
	put, err := fc.DoPut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := flight.NewRecordWriter(put, ipc.WithSchema(ordersSchema), ipc.WithAllocator(ts.mem))
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"write": {"table": "orders", "mode": "append", "mode": "upsert"}}`)})
	rec := orders(ts.mem, 0, 1)
	// io.EOF: the server has refused the stream already.
	if err := w.Write(rec); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	rec.Release()
	w.Close()
	put.CloseSend()
	_, err = put.Recv()
	wantInvalid(t, "write command", err, `key "mode" appears twice`)
	if dbs, err := ts.cl.ListDatabases(ctx); err != nil || len(dbs) != 1 {
		t.Fatalf("databases %v (%v): the refused create made one", dbs, err)
	}
}

// Names, comments and options are capped at create and alter, each with
// INVALID_ARGUMENT naming the field and the limit.
func TestDefinitionLimits(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	over := strings.Repeat("x", catalog.MaxCommentBytes+1)
	limit := fmt.Sprint(catalog.MaxCommentBytes)
	spec := func(edit func(*client.TableSpec)) client.TableSpec {
		s := ordersSpec("t", 1, "")
		edit(&s)
		return s
	}
	for _, c := range []struct {
		name  string
		spec  client.TableSpec
		parts []string
	}{
		{"column comment", spec(func(s *client.TableSpec) { s.Columns[1].Comment = over }), []string{`column "item" comment`, limit}},
		{"table comment", spec(func(s *client.TableSpec) { s.Comment = over }), []string{"comment is", limit}},
		{"option value", spec(func(s *client.TableSpec) { s.Options["iceberg.x"] = over }), []string{`option "iceberg.x"`, fmt.Sprint(catalog.MaxOptionValueBytes)}},
		{"option key", spec(func(s *client.TableSpec) { s.Options["iceberg."+over] = "1" }), []string{"option key", fmt.Sprint(catalog.MaxOptionKeyBytes)}},
		{"column name", spec(func(s *client.TableSpec) { s.Columns[1].Name = over }), []string{"column name", "200"}},
		{"table name", spec(func(s *client.TableSpec) { s.Table = over }), []string{"table name", "200"}},
		{"definition", spec(func(s *client.TableSpec) {
			for i := range catalog.MaxDefinitionBytes / catalog.MaxCommentBytes {
				s.Columns = append(s.Columns, client.Column{Name: fmt.Sprintf("c%d", i), Type: "INT", Comment: over[:catalog.MaxCommentBytes]})
			}
		}), []string{"definition", fmt.Sprint(catalog.MaxDefinitionBytes)}},
	} {
		_, err := ts.cl.CreateTable(ctx, c.spec, false)
		wantInvalid(t, c.name, err, c.parts...)
		// The Go client prefixes "table <name>: "; the server must not echo.
		if msg := strings.TrimPrefix(status.Convert(err).Message(), "table "+c.spec.Table+": "); len(msg) > 1024 {
			t.Errorf("%s: the message is %d bytes; it should not echo the input", c.name, len(msg))
		}
	}
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("t", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	_, err := ts.cl.AlterTable(ctx, client.AlterRequest{Table: "t", AddColumns: []client.Column{{Name: "n", Type: "INT", Comment: over}}})
	wantInvalid(t, "alter add column", err, `column "n" comment`, limit)
	_, err = ts.cl.AlterTable(ctx, client.AlterRequest{Table: "t", Set: map[string]string{"table.log.ttl": over}})
	wantInvalid(t, "alter set", err, `option "table.log.ttl"`, fmt.Sprint(catalog.MaxOptionValueBytes))
	_, err = ts.cl.AlterTable(ctx, client.AlterRequest{Table: "t", Reset: []string{over}})
	wantInvalid(t, "alter reset", err, "option key", fmt.Sprint(catalog.MaxOptionKeyBytes))
}

// No catalog state makes a listing fail: list-tables answers in pages that
// a client with gRPC's default 4 MiB limit accepts, and the Go client
// follows them.
func TestListingsArePaged(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	// Three definitions of almost 1 MiB each (lake properties, the cheapest
	// to create): more than one page holds.
	value := strings.Repeat("v", catalog.MaxOptionValueBytes)
	var want []string
	for i := range 3 {
		s := ordersSpec(fmt.Sprintf("wide%d", i), 1, "")
		for j := range catalog.MaxDefinitionBytes/catalog.MaxOptionValueBytes - 10 {
			s.Options[fmt.Sprintf("iceberg.p%d", j)] = value
		}
		if _, err := ts.cl.CreateTable(ctx, s, false); err != nil {
			t.Fatal(err)
		}
		want = append(want, s.Table)
	}
	fc := plainFlight(t, ts)
	var got []string
	token := ""
	pages := 0
	for ; ; pages++ {
		if pages > len(want) {
			t.Fatal("more pages than tables")
		}
		body, err := doAction(t, fc, "list-tables", fmt.Sprintf(`{"page_token": %q}`, token))
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		var res struct {
			Tables        []client.TableInfo `json:"tables"`
			NextPageToken string             `json:"next_page_token"`
		}
		if err := json.Unmarshal(body, &res); err != nil {
			t.Fatal(err)
		}
		for _, tb := range res.Tables {
			got = append(got, strings.TrimPrefix(tb.Table, "fluss."))
		}
		if len(body) > 4<<20 {
			t.Fatalf("page %d is %d bytes", pages, len(body))
		}
		if token = res.NextPageToken; token == "" {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || pages < 1 {
		t.Fatalf("%d pages listed %v, want %v in more than one page", pages+1, got, want)
	}
	all, err := ts.cl.ListTables(ctx, "")
	if err != nil || len(all) != len(want) {
		t.Fatalf("client.ListTables: %d tables (%v), want %d", len(all), err, len(want))
	}
	flights, err := fc.ListFlights(ctx, &flight.Criteria{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		if _, err := flights.Recv(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("ListFlights: %v", err)
			}
			break
		}
		n++
	}
	if n != len(want) {
		t.Fatalf("ListFlights: %d flights, want %d", n, len(want))
	}
}

func TestListPageTokens(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	for _, db := range []string{"b", "a-b", "c"} {
		if err := ts.cl.CreateDatabase(ctx, db, false); err != nil {
			t.Fatal(err)
		}
		for _, tb := range []string{"y", "x"} {
			if _, err := ts.cl.CreateTable(ctx, ordersSpec(db+"."+tb, 1, ""), false); err != nil {
				t.Fatal(err)
			}
		}
	}
	fc := ts.cl.Flight()
	list := func(action, field, extra string) []string {
		t.Helper()
		var names []string
		token := ""
		for {
			body, err := doAction(t, fc, action, fmt.Sprintf(`{"max_results": 2, "page_token": %q%s}`, token, extra))
			if err != nil {
				t.Fatal(err)
			}
			var res map[string]json.RawMessage
			if err := json.Unmarshal(body, &res); err != nil {
				t.Fatal(err)
			}
			var items []json.RawMessage
			if err := json.Unmarshal(res[field], &items); err != nil || len(items) > 2 {
				t.Fatalf("%s page %s: %d items (%v), want at most 2", action, body, len(items), err)
			}
			for _, it := range items {
				var v struct {
					Table string `json:"table"`
				}
				if json.Unmarshal(it, &v) != nil {
					var s string
					json.Unmarshal(it, &s)
					v.Table = s
				}
				names = append(names, v.Table)
			}
			token = ""
			if raw, ok := res["next_page_token"]; ok {
				json.Unmarshal(raw, &token)
			}
			if token == "" {
				return names
			}
		}
	}
	if got := fmt.Sprint(list("list-databases", "databases", "")); got != "[a-b b c fluss]" {
		t.Errorf("list-databases by pages of 2: %s", got)
	}
	if got := fmt.Sprint(list("list-tables", "tables", "")); got != "[a-b.x a-b.y b.x b.y c.x c.y]" {
		t.Errorf("list-tables by pages of 2: %s", got)
	}
	if got := fmt.Sprint(list("list-tables", "tables", `, "database": "b"`)); got != "[b.x b.y]" {
		t.Errorf("list-tables of b by pages of 2: %s", got)
	}
	_, err := doAction(t, fc, "list-tables", fmt.Sprintf(`{"database": %q}`, strings.Repeat("d", 1<<20)))
	wantInvalid(t, "a database name of 1 MiB", err, "$.database", fmt.Sprint(protocol.MaxStringBytes))
	if len(status.Convert(err).Message()) > 1024 {
		t.Errorf("the message echoes the name: %d bytes", len(status.Convert(err).Message()))
	}
	_, err = doAction(t, fc, "list-tables", `{"max_results": -1}`)
	wantInvalid(t, "negative max_results", err, "max_results")
	// A token this server did not make is refused, however well-formed, and
	// so is one of another listing.
	var dbPage struct {
		Next string `json:"next_page_token"`
	}
	body, err := doAction(t, fc, "list-databases", `{"max_results": 1}`)
	if err != nil || json.Unmarshal(body, &dbPage) != nil || dbPage.Next == "" {
		t.Fatalf("list-databases by pages of 1: %s, %v", body, err)
	}
	for _, token := range []string{"not base64!", "garbage", base64.RawURLEncoding.EncodeToString([]byte("b\x00x")), dbPage.Next + "A", strings.Repeat("A", 4000)} {
		_, err = doAction(t, fc, "list-tables", fmt.Sprintf(`{"page_token": %q}`, token))
		wantInvalid(t, "page token "+errs.Quote(token), err, "page_token", "not one this server returned")
	}
	_, err = doAction(t, fc, "list-tables", fmt.Sprintf(`{"page_token": %q}`, dbPage.Next))
	wantInvalid(t, "a page token of list-databases given to list-tables", err, "page_token")
}

// A FlightInfo larger than a client accepts is refused with a reason: every
// ticket repeats the filter.
func TestFlightInfoIsBounded(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 64, "order_id"), false); err != nil {
		t.Fatal(err)
	}
	values := make([]string, 12000)
	for i := range values {
		values[i] = fmt.Sprint(1_000_000 + i)
	}
	cmd := fmt.Sprintf(`{"scan": {"table": "orders", "filter": {"in": ["order_id", [%s]]}}}`, strings.Join(values, ","))
	_, err := plainFlight(t, ts).GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(cmd)})
	wantInvalid(t, "a 64-bucket plan of a 96 KB filter", err, "64 endpoints", "fewer buckets")
}
