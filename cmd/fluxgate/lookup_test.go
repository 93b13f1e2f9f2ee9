package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fluxgate-io/fluxgate/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

func TestKeyJSON(t *testing.T) {
	table := testTable(t)
	for _, tc := range []struct {
		values  map[string]string
		keyCols []string
		want    string
		cols    string
		bad     string
	}{
		{map[string]string{"id": "42"}, []string{"id"}, `{"id":42}`, "id", ""},
		{map[string]string{"id": " -7 "}, []string{"id"}, `{"id":-7}`, "id", ""},
		{map[string]string{"name": "a b", "id": "1"}, []string{"id", "name"}, `{"id":1,"name":"a b"}`, "id,name", ""},
		{map[string]string{"amount": "12.50", "d": "2026-11-30", "ok": "true", "ts": "2026-11-30T12:00:00.123", "ltz": "1764504000123"}, nil,
			`{"amount":"12.50","d":"2026-11-30","ltz":1764504000123,"ok":true,"ts":"2026-11-30T12:00:00.123"}`, "amount,ts,ltz,d,ok", ""},
		{map[string]string{"id": "x"}, []string{"id"}, "", "", "not a int64"},
		{map[string]string{"ok": "maybe"}, nil, "", "", "not a boolean"},
		{map[string]string{"tags": "[]"}, nil, "", "", "cannot be a key"},
		{map[string]string{"nope": "1"}, []string{"id"}, "", "", "no such column"},
		{map[string]string{"name": "x"}, []string{"id"}, "", "", "missing: [id], not key columns: [name]"},
		{map[string]string{"id": "1", "name": "x"}, []string{"id"}, "", "", "not key columns: [name]"},
	} {
		line, cols, err := keyJSON(tc.values, tc.keyCols, table)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("keyJSON(%v, %v) = %s, %v; want an error containing %q", tc.values, tc.keyCols, line, err, tc.bad)
			}
			continue
		}
		if err != nil {
			t.Errorf("keyJSON(%v, %v): %v", tc.values, tc.keyCols, err)
			continue
		}
		if got := strings.TrimSpace(string(line)); got != tc.want || strings.Join(cols, ",") != tc.cols {
			t.Errorf("keyJSON(%v, %v) = %s %v, want %s %s", tc.values, tc.keyCols, got, cols, tc.want, tc.cols)
		}
	}
}

func TestParseKeyFlags(t *testing.T) {
	got, err := parseKeyFlags([]string{"a=1", "b=x=y", "c="})
	if err != nil || len(got) != 3 || got["a"] != "1" || got["b"] != "x=y" || got["c"] != "" {
		t.Errorf("parseKeyFlags = %v, %v", got, err)
	}
	for _, bad := range [][]string{{"a"}, {"=1"}, {"a=1", "a=2"}} {
		if _, err := parseKeyFlags(bad); err == nil {
			t.Errorf("parseKeyFlags(%q) accepted", bad)
		}
	}
}

func TestLookupKeyColumns(t *testing.T) {
	info := &client.TableInfo{TableSpec: client.TableSpec{PrimaryKey: []string{"a", "b"}, Options: map[string]string{"bucket.key": "a"}},
		Indexes: []client.Index{{Name: "primary_key", Columns: []string{"a", "b"}}, {Name: "prefix", Columns: []string{"a"}}}}
	if got := lookupKeyColumns(info, false); strings.Join(got, ",") != "a,b" {
		t.Errorf("point key = %v", got)
	}
	if got := lookupKeyColumns(info, true); strings.Join(got, ",") != "a" {
		t.Errorf("prefix key = %v", got)
	}
	info.Indexes = info.Indexes[:1]
	info.Options["bucket.key"] = "b, a"
	if got := lookupKeyColumns(info, true); strings.Join(got, ",") != "b,a" {
		t.Errorf("prefix key without an index = %v, want the bucket key", got)
	}
	delete(info.Options, "bucket.key")
	if got := lookupKeyColumns(info, true); strings.Join(got, ",") != "a,b" {
		t.Errorf("prefix key without a bucket key = %v, want the primary key", got)
	}
	if got := lookupKeyColumns(&client.TableInfo{}, false); got != nil {
		t.Errorf("log table key = %v", got)
	}
}

// fakeLookupServer is a primary-key table fluss.users(id BIGINT, name
// STRING) holding the even ids, for the lookup verb.
type fakeLookupServer struct {
	flight.BaseFlightServer
	mem memory.Allocator

	mu   sync.Mutex
	cmds []string
	rows []int64 // rows of each key batch
}

func (s *fakeLookupServer) DoAction(a *flight.Action, st flight.FlightService_DoActionServer) error {
	if a.Type != client.ActionDescribeTable {
		return status.Errorf(codes.Unimplemented, "action %s", a.Type)
	}
	var body struct {
		Table string `json:"table"`
	}
	_ = json.Unmarshal(a.Body, &body)
	if body.Table != "fluss.users" {
		return status.Errorf(codes.NotFound, "table %s not found", body.Table)
	}
	return st.Send(&flight.Result{Body: []byte(`{"table": "fluss.users", "columns": [{"name": "id", "type": "BIGINT", "nullable": false},
		{"name": "name", "type": "STRING"}], "primary_key": ["id"], "options": {"bucket.num": "1"}, "table_id": 1,
		"kind": "primary_key", "indexes": [{"name": "primary_key", "columns": ["id"]}]}`)})
}

func (s *fakeLookupServer) DoExchange(st flight.FlightService_DoExchangeServer) error {
	rdr, err := flight.NewRecordReader(st, ipc.WithAllocator(s.mem))
	if err != nil {
		return err
	}
	defer rdr.Release()
	s.mu.Lock()
	s.cmds = append(s.cmds, string(rdr.LatestFlightDescriptor().Cmd))
	s.mu.Unlock()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: client.KeyIndexColumn, Type: arrow.PrimitiveTypes.Int32},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	w := flight.NewRecordWriter(st, ipc.WithSchema(schema), ipc.WithAllocator(s.mem))
	defer w.Close()
	for rdr.Next() {
		keys := rdr.RecordBatch()
		if keys.NumCols() != 1 || keys.ColumnName(0) != "id" || keys.Column(0).DataType().ID() != arrow.INT64 {
			return status.Errorf(codes.InvalidArgument, "key batch %s: want id BIGINT", keys.Schema())
		}
		s.mu.Lock()
		s.rows = append(s.rows, keys.NumRows())
		s.mu.Unlock()
		b := array.NewRecordBuilder(s.mem, schema)
		for i, id := range keys.Column(0).(*array.Int64).Int64Values() {
			if id%2 == 0 {
				b.Field(0).(*array.Int32Builder).Append(int32(i))
				b.Field(1).(*array.Int64Builder).Append(id)
				b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("user-%d", id))
			}
		}
		ans := b.NewRecordBatch()
		b.Release()
		err := w.WriteWithAppMetadata(ans, []byte(fmt.Sprintf(`{"keys": %d, "rows": %d}`, keys.NumRows(), ans.NumRows())))
		ans.Release()
		if err != nil {
			return err
		}
	}
	return rdr.Err()
}

func startFakeLookupServer(t *testing.T) (*fakeLookupServer, string) {
	t.Helper()
	fs := &fakeLookupServer{mem: memtest.Allocator(t)}
	srv := flight.NewServerWithMiddleware(nil)
	if err := srv.Init("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	srv.RegisterFlightService(fs)
	go srv.Serve()
	t.Cleanup(srv.Shutdown)
	return fs, srv.Addr().String()
}

func TestLookupVerb(t *testing.T) {
	fs, addr := startFakeLookupServer(t)
	a := []string{"--addr", addr}

	out, err := run(t, lookupMain, "", append([]string{"--table", "fluss.users", "--key", "id=4"}, a...)...)
	if want := "id  name\n--  ------\n4   user-4\n(1 row)\n"; err != nil || out != want {
		t.Errorf("lookup --key id=4:\n%s%v\nwant:\n%s", out, err, want)
	}
	out, err = run(t, lookupMain, "", append([]string{"fluss.users", "--key", "id=5", "--format", "csv", "--insert-if-not-exists", "--columns", "name"}, a...)...)
	if err != nil || out != "id,name\n" {
		t.Errorf("lookup of an absent key as CSV: %q, %v", out, err)
	}
	keys := "{\"id\": 1}\n{\"id\": 2}\n{\"id\": 3}\n{\"id\": 4}\n{\"id\": 6}\n"
	out, err = run(t, lookupMain, keys, append([]string{"--table", "fluss.users", "--keys", "-", "--batch-rows", "2", "--format", "jsonl"}, a...)...)
	want := `{"_key_index":1,"id":2,"name":"user-2"}
{"_key_index":3,"id":4,"name":"user-4"}
{"_key_index":4,"id":6,"name":"user-6"}
`
	if err != nil || out != want {
		t.Errorf("lookup --keys:\n%s%v\nwant:\n%s", out, err, want)
	}
	fs.mu.Lock()
	if len(fs.cmds) != 3 {
		t.Errorf("%d lookup streams, want 3", len(fs.cmds))
	}
	if fmt.Sprint(fs.rows) != "[1 1 2 2 1]" {
		t.Errorf("key batches of %v rows, want [1 1 2 2 1]", fs.rows)
	}
	var cmd map[string]map[string]any
	if err := json.Unmarshal([]byte(fs.cmds[1]), &cmd); err != nil || cmd["lookup"]["insert_if_not_exists"] != true ||
		fmt.Sprint(cmd["lookup"]["columns"]) != "[name]" {
		t.Errorf("lookup command %s", fs.cmds[1])
	}
	fs.mu.Unlock()

	// Errors: bad flags locally, the server's with its code.
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--table", "fluss.users"}, "--key"},
		{[]string{"--table", "fluss.users", "--key", "id=1", "--keys", "x.jsonl"}, "--key"},
		{[]string{"--key", "id=1"}, "--table is required"},
		{[]string{"--table", "fluss.users", "--key", "id=abc"}, "not a int64"},
		{[]string{"--table", "fluss.users", "--key", "name=x"}, "the key columns are id"},
		{[]string{"--table", "fluss.users", "--key", "id=1", "--format", "xml"}, "unknown output format"},
	} {
		if _, err := run(t, lookupMain, "", append(tc.args, a...)...); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("lookup %q: %v, want an error containing %q", tc.args, err, tc.msg)
		}
	}
	if _, err := run(t, lookupMain, "", append([]string{"--table", "fluss.nope", "--key", "id=1"}, a...)...); status.Code(err) != codes.NotFound ||
		!strings.HasPrefix(err.Error(), "NOT_FOUND: ") {
		t.Errorf("lookup of a missing table: %v", err)
	}
	if _, err := run(t, lookupMain, "{\"id\": \"x\"}\n", append([]string{"--table", "fluss.users", "--keys", "-"}, a...)...); err == nil {
		t.Error("a keys file with a mistyped key was accepted")
	}
}

// TestLookupVerbAgainstServer runs lookup against the real server.
func TestLookupVerbAgainstServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr := startTestServer(t)
	a := []string{"--addr", addr}
	ctx := context.Background()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateTable(ctx, client.TableSpec{Table: "fluss.dict", Columns: []client.Column{
		{Name: "name", Type: "STRING"}, {Name: "uid", Type: "INT"}, {Name: "note", Type: "STRING"},
	}, PrimaryKey: []string{"name"}, Options: map[string]string{"auto-increment.fields": "uid", "bucket.num": "2"}}, false); err != nil {
		t.Fatal(err)
	}
	// startTestServer's temporary directory goes before the server stops:
	// drop the table so that the server's shutdown has nothing to write there.
	defer c.DropTable(ctx, "fluss.dict", true)
	out, err := run(t, lookupMain, "", append([]string{"--table", "fluss.dict", "--key", "name=alice", "--insert-if-not-exists", "--format", "csv"}, a...)...)
	if err != nil || out != "name,uid,note\nalice,1,\n" {
		t.Fatalf("insert-if-not-exists lookup of alice: %q, %v", out, err)
	}
	keys := "{\"name\": \"bob\"}\n{\"name\": \"alice\"}\n{\"name\": \"carol\"}\n"
	out, err = run(t, lookupMain, keys, append([]string{"--table", "fluss.dict", "--keys", "-", "--insert-if-not-exists", "--columns", "uid", "--format", "jsonl"}, a...)...)
	if want := "{\"_key_index\":0,\"uid\":2}\n{\"_key_index\":1,\"uid\":1}\n{\"_key_index\":2,\"uid\":3}\n"; err != nil || out != want {
		t.Fatalf("lookup --keys with insert-if-not-exists:\n%s%v\nwant:\n%s", out, err, want)
	}
	out, err = run(t, lookupMain, "", append([]string{"--table", "fluss.dict", "--key", "name=dave"}, a...)...)
	if err != nil || !strings.Contains(out, "(0 rows)") {
		t.Errorf("lookup of an absent key: %q, %v", out, err)
	}
}
