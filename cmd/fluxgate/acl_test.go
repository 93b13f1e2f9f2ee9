package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	flightgen "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/server"
)

// writeTokenUsers writes a users file whose callers are static tokens:
// "<name>-token" for each name; root is an admin.
func writeTokenUsers(t *testing.T, names ...string) string {
	t.Helper()
	var tokens []map[string]any
	for _, n := range names {
		tokens = append(tokens, map[string]any{"name": n, "token_sha256": auth.HashToken(n + "-token"), "admin": n == "root"})
	}
	raw, _ := json.Marshal(map[string]any{"tokens": tokens})
	path := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// code is the gRPC code of err, through wrapping.
func code(err error) codes.Code {
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus().Code()
	}
	return status.Code(err)
}

func keyRecord(mem memory.Allocator, withValue bool, keys ...string) arrow.RecordBatch {
	fields := []arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}}
	if withValue {
		fields = append(fields, arrow.Field{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true})
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues(keys, nil)
	if withValue {
		b.Field(1).(*array.StringBuilder).AppendValues(keys, nil)
	}
	return b.NewRecordBatch()
}

func put(ctx context.Context, c *client.Client, table string, keys ...string) error {
	w, err := c.NewWriter(ctx, client.WriteRequest{Table: table})
	if err != nil {
		return err
	}
	defer w.Close()
	rec := keyRecord(memtest.Shared, true, keys...)
	defer rec.Release()
	_, err = w.Write(rec)
	return err
}

func exchange(ctx context.Context, c *client.Client, table string, insert bool) error {
	l, err := c.Lookup(ctx, client.LookupRequest{Table: table, InsertIfNotExists: insert})
	if err != nil {
		return err
	}
	defer l.Close()
	rec := keyRecord(memtest.Shared, false, "a", "new")
	defer rec.Release()
	ans, _, err := l.Lookup(rec)
	if err == nil {
		ans.Release()
	}
	return err
}

func lookupDescriptor(table string, insert bool) *flight.FlightDescriptor {
	cmd, _ := json.Marshal(map[string]any{"lookup": map[string]any{"table": table, "keys": []map[string]any{{"k": "a"}}, "insert_if_not_exists": insert}})
	return &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd}
}

func pathDescriptor(db, table string) *flight.FlightDescriptor {
	return &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{db, table}}
}

// redeem reads every endpoint of info.
func redeem(ctx context.Context, c *client.Client, info *flight.FlightInfo) error {
	for _, ep := range info.Endpoint {
		s, err := c.Flight().DoGet(ctx, ep.Ticket)
		if err != nil {
			return err
		}
		for {
			_, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func listFlights(ctx context.Context, c *client.Client, database string) ([]string, error) {
	s, err := c.Flight().ListFlights(ctx, &flight.Criteria{Expression: []byte(database)})
	if err != nil {
		return nil, err
	}
	var names []string
	for {
		info, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return names, err
		}
		p := info.FlightDescriptor.Path
		names = append(names, p[0]+"."+p[1])
	}
}

// TestPermissions runs every RPC and action as four callers: root (admin),
// reader (read on db1), writer (write on db1.t) and none (no grants), and
// checks which are PERMISSION_DENIED (PROTOCOL.md §8).
func TestPermissions(t *testing.T) {
	srv := startAuthServer(t, "--users", writeTokenUsers(t, "root", "reader", "writer", "none"))
	ctx := context.Background()
	callers := map[string]*client.Client{}
	for _, n := range []string{"root", "reader", "writer", "none"} {
		c, err := dial(t, srv.FlightAddr(), client.WithBearerToken(n+"-token"))
		if err != nil {
			t.Fatal(err)
		}
		callers[n] = c
	}
	root := callers["root"]
	// Callers without a valid token: every call of the surface is
	// UNAUTHENTICATED for them.
	anon, err := dial(t, srv.FlightAddr())
	if err != nil {
		t.Fatal(err)
	}
	forged, err := dial(t, srv.FlightAddr(), client.WithBearerToken("v1.e30.AAAA"))
	if err != nil {
		t.Fatal(err)
	}

	// Setup, as the admin: db1.t and db2.u, one row each; the grants.
	for _, db := range []string{"db1", "db2"} {
		if err := root.CreateDatabase(ctx, db, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"db1.t", "db2.u"} {
		spec := client.TableSpec{Table: name, Columns: []client.Column{{Name: "k", Type: "STRING"}, {Name: "v", Type: "STRING"}}, PrimaryKey: []string{"k"}}
		if _, err := root.CreateTable(ctx, spec, false); err != nil {
			t.Fatal(err)
		}
		if err := put(ctx, root, name, "a"); err != nil {
			t.Fatal(err)
		}
	}
	grant := func(c *client.Client, action, principal, db, table string, ops ...string) error {
		return c.Action(ctx, action, map[string]any{"principal": principal, "database": db, "table": table, "operations": ops}, nil)
	}
	if err := grant(root, "grant", "reader", "db1", "", "read"); err != nil {
		t.Fatal(err)
	}
	if err := grant(root, "grant", "writer", "db1", "t", "write"); err != nil {
		t.Fatal(err)
	}
	// Tickets planned by the admin, redeemed by the others.
	scanInfo, err := root.Flight().GetFlightInfo(ctx, pathDescriptor("db1", "t"))
	if err != nil {
		t.Fatal(err)
	}
	insertInfo, err := root.Flight().GetFlightInfo(ctx, lookupDescriptor("db1.t", true))
	if err != nil {
		t.Fatal(err)
	}

	all := []string{"root", "reader", "writer", "none"}
	type call func(c *client.Client) error
	// Who may make each call; everyone else gets PERMISSION_DENIED.
	rpcs := map[string][]struct {
		name    string
		call    call
		allowed []string
	}{
		"Handshake":   {}, // authentication, not permissions (auth_test.go)
		"ListActions": {{"list", func(c *client.Client) error { _, err := c.ListActions(ctx); return err }, all}},
		"ListFlights": {
			{"all databases (filtered)", func(c *client.Client) error { _, err := listFlights(ctx, c, ""); return err }, all},
			{"db1", func(c *client.Client) error { _, err := listFlights(ctx, c, "db1"); return err }, []string{"root", "reader", "writer"}},
			{"db2", func(c *client.Client) error { _, err := listFlights(ctx, c, "db2"); return err }, []string{"root"}},
		},
		"GetFlightInfo": {
			{"scan db1.t", func(c *client.Client) error {
				_, err := c.Flight().GetFlightInfo(ctx, pathDescriptor("db1", "t"))
				return err
			}, []string{"root", "reader"}},
			{"scan db2.u", func(c *client.Client) error {
				_, err := c.Flight().GetFlightInfo(ctx, pathDescriptor("db2", "u"))
				return err
			}, []string{"root"}},
			{"inline lookup", func(c *client.Client) error {
				_, err := c.Flight().GetFlightInfo(ctx, lookupDescriptor("db1.t", false))
				return err
			}, []string{"root", "reader"}},
			{"inline insert-if-not-exists", func(c *client.Client) error {
				_, err := c.Flight().GetFlightInfo(ctx, lookupDescriptor("db1.t", true))
				return err
			}, []string{"root", "writer"}},
		},
		"PollFlightInfo": {
			{"scan db1.t", func(c *client.Client) error {
				_, err := c.Flight().PollFlightInfo(ctx, pathDescriptor("db1", "t"))
				return err
			}, []string{"root", "reader"}},
			{"inline insert-if-not-exists", func(c *client.Client) error {
				_, err := c.Flight().PollFlightInfo(ctx, lookupDescriptor("db1.t", true))
				return err
			}, []string{"root", "writer"}},
		},
		"GetSchema": {
			{"db1.t", func(c *client.Client) error {
				_, err := c.Flight().GetSchema(ctx, pathDescriptor("db1", "t"))
				return err
			}, []string{"root", "reader"}},
			{"db2.u", func(c *client.Client) error {
				_, err := c.Flight().GetSchema(ctx, pathDescriptor("db2", "u"))
				return err
			}, []string{"root"}},
			{"inline insert-if-not-exists", func(c *client.Client) error {
				_, err := c.Flight().GetSchema(ctx, lookupDescriptor("db1.t", true))
				return err
			}, []string{"root", "writer"}},
		},
		"DoGet": {
			{"scan ticket", func(c *client.Client) error { return redeem(ctx, c, scanInfo) }, []string{"root", "reader"}},
			{"insert-if-not-exists ticket", func(c *client.Client) error { return redeem(ctx, c, insertInfo) }, []string{"root", "writer"}},
		},
		"DoPut": {
			{"db1.t", func(c *client.Client) error { return put(ctx, c, "db1.t", "b") }, []string{"root", "writer"}},
			{"db2.u", func(c *client.Client) error { return put(ctx, c, "db2.u", "b") }, []string{"root"}},
		},
		"DoExchange": {
			{"lookup db1.t", func(c *client.Client) error { return exchange(ctx, c, "db1.t", false) }, []string{"root", "reader"}},
			{"lookup db2.u", func(c *client.Client) error { return exchange(ctx, c, "db2.u", false) }, []string{"root"}},
			{"insert-if-not-exists", func(c *client.Client) error { return exchange(ctx, c, "db1.t", true) }, []string{"root", "writer"}},
		},
	}
	action := func(name string, body any) call {
		return func(c *client.Client) error { return c.Action(ctx, name, body, nil) }
	}
	actions := map[string][]struct {
		call    call
		allowed []string
	}{
		"create-database": {{action("create-database", map[string]any{"database": "db3", "if_not_exists": true}), []string{"root"}}},
		"drop-database":   {{action("drop-database", map[string]any{"database": "db1-nonesuch"}), []string{"root"}}},
		"list-databases":  {{action("list-databases", nil), all}},
		"create-table":    {{action("create-table", map[string]any{"table": "db1.n", "columns": []map[string]any{{"name": "x", "type": "INT"}}, "if_not_exists": true}), []string{"root"}}},
		"drop-table":      {{action("drop-table", map[string]any{"table": "db1.nonesuch"}), []string{"root"}}},
		"describe-table":  {{action("describe-table", map[string]any{"table": "db1.t"}), []string{"root", "reader", "writer"}}, {action("describe-table", map[string]any{"table": "db2.u"}), []string{"root"}}},
		"list-tables":     {{action("list-tables", nil), all}, {action("list-tables", map[string]any{"database": "db2"}), []string{"root"}}},
		"alter-table":     {{action("alter-table", map[string]any{"table": "db1.t", "set": map[string]string{}}), []string{"root"}}},
		"list-offsets":    {{action("list-offsets", map[string]any{"table": "db1.t"}), []string{"root", "reader", "writer"}}, {action("list-offsets", map[string]any{"table": "db2.u"}), []string{"root"}}},
		"lake-snapshot":   {{action("lake-snapshot", map[string]any{"table": "db1.t"}), []string{"root", "reader", "writer"}}},
		"tier-now":        {{action("tier-now", map[string]any{"table": "db1.t"}), []string{"root", "writer"}}},
		"compact-lake":    {{action("compact-lake", map[string]any{"table": "db1.t"}), []string{"root", "writer"}}},
		"undo":            {{action("undo", map[string]any{"table": "db1.t", "offsets": map[string]int64{}}), []string{"root", "writer"}}},
		"writer-state":    {{action("writer-state", map[string]any{"table": "db1.t", "writer_id": "w"}), []string{"root", "writer"}}},
		"table-stats":     {{action("table-stats", map[string]any{"table": "db1.t"}), []string{"root", "reader"}}},
		"grant":           {{action("grant", map[string]any{"principal": "x", "database": "db9", "operations": []string{"read"}}), []string{"root"}}},
		"revoke":          {{action("revoke", map[string]any{"principal": "x", "database": "db9", "operations": []string{"read"}}), []string{"root"}}},
		"list-grants":     {{action("list-grants", nil), []string{"root"}}},

		// Partitions: write to create or drop one, read to list them.
		"create-partition": {{action("create-partition", map[string]any{"table": "db1.t", "partition": map[string]string{"x": "1"}}), []string{"root", "writer"}}},
		"drop-partition":   {{action("drop-partition", map[string]any{"table": "db1.t", "partition": map[string]string{"x": "1"}}), []string{"root", "writer"}}},
		"list-partitions":  {{action("list-partitions", map[string]any{"table": "db1.t"}), []string{"root", "reader"}}},

		// Producer offsets exist to undo writes: write on the table.
		"register-producer-offsets": {{action("register-producer-offsets", map[string]any{"producer_id": "p", "table": "db1.t", "offsets": map[string]int64{"0": 0}}), []string{"root", "writer"}}},
		"get-producer-offsets":      {{action("get-producer-offsets", map[string]any{"producer_id": "p", "table": "db1.t"}), []string{"root", "writer"}}},
		"delete-producer-offsets":   {{action("delete-producer-offsets", map[string]any{"producer_id": "p", "table": "db1.t"}), []string{"root", "writer"}}},
	}
	check := func(what string, c call, allowed []string) {
		t.Helper()
		for _, who := range all {
			err := c(callers[who])
			denied := code(err) == codes.PermissionDenied
			if want := !slices.Contains(allowed, who); denied != want {
				t.Errorf("%s as %s: %v (want denied: %v)", what, who, err, want)
			}
		}
		for who, cl := range map[string]*client.Client{"no token": anon, "a forged token": forged} {
			err := c(cl)
			if who == "no token" && what == "ListActions list" { // it needs no token (PROTOCOL.md §8)
				if err != nil {
					t.Errorf("%s with %s: %v, want an answer", what, who, err)
				}
				continue
			}
			if code(err) != codes.Unauthenticated {
				t.Errorf("%s with %s: %v, want UNAUTHENTICATED", what, who, err)
			}
		}
	}

	// The whole surface: every RPC of the Flight service and every action
	// ListActions lists has cases.
	for _, m := range flightgen.FlightService_ServiceDesc.Methods {
		if _, ok := rpcs[m.MethodName]; !ok {
			t.Errorf("RPC %s has no case", m.MethodName)
		}
	}
	for _, st := range flightgen.FlightService_ServiceDesc.Streams {
		if _, ok := rpcs[st.StreamName]; !ok && st.StreamName != "DoAction" {
			t.Errorf("RPC %s has no case", st.StreamName)
		}
	}
	listed, err := root.ListActions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range listed {
		if _, ok := actions[a.Type]; !ok {
			t.Errorf("action %s has no case", a.Type)
		}
	}
	for rpc, cases := range rpcs {
		for _, c := range cases {
			check(rpc+" "+c.name, c.call, c.allowed)
		}
	}
	for name, cases := range actions {
		for _, c := range cases {
			check("action "+name, c.call, c.allowed)
		}
	}

	// Listings show only what the caller may describe.
	for who, want := range map[string][]string{"root": {"db1.n", "db1.t", "db2.u"}, "reader": {"db1.n", "db1.t"}, "writer": {"db1.t"}, "none": nil} {
		got, err := listFlights(ctx, callers[who], "")
		slices.Sort(got)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ListFlights as %s: %v %v, want %v", who, got, err, want)
		}
		tables, err := callers[who].ListTables(ctx, "")
		var names []string
		for _, ti := range tables {
			names = append(names, ti.Table)
		}
		slices.Sort(names)
		if err != nil || !slices.Equal(names, want) {
			t.Errorf("list-tables as %s: %v %v, want %v", who, names, err, want)
		}
	}
	for who, want := range map[string][]string{"reader": {"db1"}, "writer": {"db1"}, "none": {}} {
		if dbs, err := callers[who].ListDatabases(ctx); err != nil || !slices.Equal(dbs, want) {
			t.Errorf("list-databases as %s: %v %v, want %v", who, dbs, err, want)
		}
	}

	// The admin grants; the user then succeeds; revoked, it is denied again.
	if err := put(ctx, callers["reader"], "db2.u", "c"); code(err) != codes.PermissionDenied {
		t.Fatalf("reader writing db2.u: %v", err)
	}
	if err := grant(callers["reader"], "grant", "reader", "db2", "u", "write"); code(err) != codes.PermissionDenied {
		t.Fatalf("reader granting itself: %v", err)
	}
	if err := grant(root, "grant", "reader", "db2", "u", "write"); err != nil {
		t.Fatal(err)
	}
	if err := put(ctx, callers["reader"], "db2.u", "c"); err != nil {
		t.Fatalf("reader writing db2.u after the grant: %v", err)
	}
	var got struct {
		Grants []map[string]any `json:"grants"`
	}
	if err := root.Action(ctx, "list-grants", map[string]any{"principal": "reader"}, &got); err != nil || len(got.Grants) != 2 {
		t.Fatalf("list-grants: %+v %v", got, err)
	}
	if err := grant(root, "revoke", "reader", "db2", "u", "write"); err != nil {
		t.Fatal(err)
	}
	if err := put(ctx, callers["reader"], "db2.u", "d"); code(err) != codes.PermissionDenied {
		t.Fatalf("reader writing db2.u after the revoke: %v", err)
	}
	if err := grant(root, "grant", "reader", "db2", "", "READ"); code(err) != codes.InvalidArgument {
		t.Fatalf("unknown operation: %v, want INVALID_ARGUMENT", err)
	}
}

// TestPermissionsPersist: grants survive a restart; denials are logged.
func TestPermissionsPersist(t *testing.T) {
	data := t.TempDir()
	users := writeTokenUsers(t, "root", "reader")
	var logs bytes.Buffer
	start := func() *server.Server {
		cfg, err := parseServeFlags([]string{"--data", data, "--listen", "127.0.0.1:0", "--http", "", "--users", users})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.Start(t.Context(), &cfg.Config, slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	ctx := context.Background()
	srv := start()
	root, _ := dial(t, srv.FlightAddr(), client.WithBearerToken("root-token"))
	if err := root.Action(ctx, "grant", map[string]any{"principal": "reader", "database": "fluss", "operations": []string{"describe"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	srv = start()
	reader, _ := dial(t, srv.FlightAddr(), client.WithBearerToken("reader-token"))
	if dbs, err := reader.ListDatabases(ctx); err != nil || !slices.Equal(dbs, []string{"fluss"}) {
		t.Fatalf("after a restart: %v %v", dbs, err)
	}
	if err := reader.CreateDatabase(ctx, "x", false); code(err) != codes.PermissionDenied {
		t.Fatalf("create-database as reader: %v", err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if l := logs.String(); !strings.Contains(l, `msg="permission denied" rpc=create-database principal=reader operation=create resource="database x"`) {
		t.Errorf("the denial is not logged:\n%s", l)
	}
}
