package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// lookupServer answers lookups of a pretend table whose rows are the even
// ids, (id, "n-<id>"). A prefix lookup returns two rows per even key. The
// key -1 fails the stream with INVALID_ARGUMENT; table fluss.missing is
// NOT_FOUND; table fluss.silent reads the keys and answers nothing.
type lookupServer struct {
	flight.BaseFlightServer
	mem memory.Allocator

	mu        sync.Mutex
	cmds      []string // the descriptor command of every DoExchange and GetFlightInfo
	keyCounts []int64  // rows of every key batch received
}

var lookupKeySchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

type fakeLookupCmd struct {
	Lookup struct {
		LookupRequest
		Keys []map[string]any `json:"keys"`
	} `json:"lookup"`
}

func parseFakeLookup(cmd []byte) (fakeLookupCmd, error) {
	var c fakeLookupCmd
	dec := json.NewDecoder(bytes.NewReader(cmd))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, status.Errorf(codes.InvalidArgument, "lookup command: %v", err)
	}
	if c.Lookup.Table == "fluss.missing" {
		return c, status.Error(codes.NotFound, "table fluss.missing not found")
	}
	return c, nil
}

// answerSchema is _key_index then the requested columns of (id, name).
func answerSchema(cols []string) (*arrow.Schema, error) {
	if len(cols) == 0 {
		cols = []string{"id", "name"}
	}
	fields := []arrow.Field{{Name: KeyIndexColumn, Type: arrow.PrimitiveTypes.Int32}}
	for _, c := range cols {
		switch c {
		case "id":
			fields = append(fields, arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64})
		case "name":
			fields = append(fields, arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true})
		default:
			return nil, status.Errorf(codes.NotFound, "column %s not found", c)
		}
	}
	return arrow.NewSchema(fields, nil), nil
}

// answer looks the ids up.
func (s *lookupServer) answer(schema *arrow.Schema, prefix bool, ids []int64) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(s.mem, schema)
	defer b.Release()
	for i, id := range ids {
		if id == -1 {
			return nil, status.Errorf(codes.InvalidArgument, "key column id: -1 is not a valid key")
		}
		if id%2 != 0 {
			continue
		}
		n := 1
		if prefix {
			n = 2
		}
		for j := range n {
			b.Field(0).(*array.Int32Builder).Append(int32(i))
			for c := 1; c < schema.NumFields(); c++ {
				switch schema.Field(c).Name {
				case "id":
					b.Field(c).(*array.Int64Builder).Append(id)
				case "name":
					b.Field(c).(*array.StringBuilder).Append(fmt.Sprintf("n-%d.%d", id, j))
				}
			}
		}
	}
	return b.NewRecordBatch(), nil
}

func (s *lookupServer) DoExchange(st flight.FlightService_DoExchangeServer) error {
	rdr, err := flight.NewRecordReader(st, ipc.WithAllocator(s.mem))
	if err != nil {
		return err
	}
	defer rdr.Release()
	desc := rdr.LatestFlightDescriptor()
	if desc == nil || desc.Type != flight.DescriptorCMD {
		return status.Error(codes.InvalidArgument, "want a CMD descriptor")
	}
	s.mu.Lock()
	s.cmds = append(s.cmds, string(desc.Cmd))
	s.mu.Unlock()
	cmd, err := parseFakeLookup(desc.Cmd)
	if err != nil {
		return err
	}
	schema, err := answerSchema(cmd.Lookup.Columns)
	if err != nil {
		return err
	}
	w := flight.NewRecordWriter(st, ipc.WithSchema(schema), ipc.WithAllocator(s.mem))
	defer w.Close()
	for rdr.Next() {
		keys := rdr.RecordBatch()
		s.mu.Lock()
		s.keyCounts = append(s.keyCounts, keys.NumRows())
		s.mu.Unlock()
		if cmd.Lookup.Table == "fluss.silent" {
			continue
		}
		idx := keys.Schema().FieldIndices("id")
		if len(idx) != 1 || keys.NumCols() != 1 {
			return status.Errorf(codes.InvalidArgument, "key batch %s: want the key column id", keys.Schema())
		}
		ans, err := s.answer(schema, cmd.Lookup.Prefix, keys.Column(idx[0]).(*array.Int64).Int64Values())
		if err != nil {
			return err
		}
		md := fmt.Sprintf(`{"keys": %d, "rows": %d}`, keys.NumRows(), ans.NumRows())
		err = w.WriteWithAppMetadata(ans, []byte(md))
		ans.Release()
		if err != nil {
			return err
		}
	}
	return rdr.Err()
}

// GetFlightInfo plans an inline lookup: one endpoint whose ticket carries
// the command.
func (s *lookupServer) GetFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	s.mu.Lock()
	s.cmds = append(s.cmds, string(d.Cmd))
	s.mu.Unlock()
	cmd, err := parseFakeLookup(d.Cmd)
	if err != nil {
		return nil, err
	}
	schema, err := answerSchema(cmd.Lookup.Columns)
	if err != nil {
		return nil, err
	}
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.mem),
		FlightDescriptor: d,
		TotalRecords:     -1,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: d.Cmd}}},
	}, nil
}

func (s *lookupServer) DoGet(tk *flight.Ticket, st flight.FlightService_DoGetServer) error {
	cmd, err := parseFakeLookup(tk.Ticket)
	if err != nil {
		return err
	}
	schema, err := answerSchema(cmd.Lookup.Columns)
	if err != nil {
		return err
	}
	var ids []int64
	for i, k := range cmd.Lookup.Keys {
		v, ok := k["id"].(float64)
		if !ok || len(k) != 1 {
			return status.Errorf(codes.InvalidArgument, "key %d: %v: want {\"id\": n}", i, k)
		}
		ids = append(ids, int64(v))
	}
	ans, err := s.answer(schema, cmd.Lookup.Prefix, ids)
	if err != nil {
		return err
	}
	defer ans.Release()
	w := flight.NewRecordWriter(st, ipc.WithSchema(schema), ipc.WithAllocator(s.mem))
	defer w.Close()
	return w.WriteWithAppMetadata(ans, []byte(fmt.Sprintf(`{"keys": %d, "rows": %d}`, len(ids), ans.NumRows())))
}

func startLookupServer(t *testing.T) (*lookupServer, *Client, *memory.CheckedAllocator) {
	t.Helper()
	ls := &lookupServer{mem: memtest.Allocator(t)}
	srv := flight.NewServerWithMiddleware(nil)
	if err := srv.Init("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	srv.RegisterFlightService(ls)
	go srv.Serve()
	t.Cleanup(srv.Shutdown)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, "grpc://"+srv.Addr().String(), WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return ls, c, mem
}

func keyBatch(mem memory.Allocator, ids ...int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, lookupKeySchema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	return b.NewRecordBatch()
}

// rowsOf renders an answer as "keyIndex:id:name" items.
func rowsOf(t *testing.T, rec arrow.RecordBatch) string {
	t.Helper()
	if rec.Schema().Field(0).Name != KeyIndexColumn || rec.Schema().Field(0).Type.ID() != arrow.INT32 {
		t.Fatalf("answer schema %s: want _key_index INT32 first", rec.Schema())
	}
	var parts []string
	for i := range int(rec.NumRows()) {
		vals := make([]string, rec.NumCols())
		for c := range vals {
			vals[c] = rec.Column(c).ValueStr(i)
		}
		parts = append(parts, strings.Join(vals, ":"))
	}
	return strings.Join(parts, " ")
}

func TestLookupSynchronous(t *testing.T) {
	ls, c, mem := startLookupServer(t)
	defer mem.AssertSize(t, 0)
	ctx := testCtx(t)

	l, err := c.Lookup(ctx, LookupRequest{Table: "fluss.t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ids  []int64
		want string
	}{
		{[]int64{4, 3, 2}, "0:4:n-4.0 2:2:n-2.0"},
		{[]int64{1}, ""},
		{[]int64{}, ""},
		{[]int64{10, 12}, "0:10:n-10.0 1:12:n-12.0"},
	} {
		keys := keyBatch(mem, tc.ids...)
		ans, meta, err := l.Lookup(keys)
		keys.Release()
		if err != nil {
			t.Fatalf("lookup %v: %v", tc.ids, err)
		}
		if got := rowsOf(t, ans); got != tc.want {
			t.Errorf("lookup %v = %q, want %q", tc.ids, got, tc.want)
		}
		if meta.Keys != len(tc.ids) || meta.Rows != int(ans.NumRows()) {
			t.Errorf("lookup %v: meta %+v, want keys %d rows %d", tc.ids, meta, len(tc.ids), ans.NumRows())
		}
		ans.Release()
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("Recv after Close: %v, want io.EOF", err)
	}
	keys := keyBatch(mem, 2)
	if err := l.Send(keys); err == nil {
		t.Error("Send after Close succeeded")
	}
	keys.Release()

	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.cmds) != 1 {
		t.Fatalf("%d DoExchange calls, want 1 (one stream for every lookup)", len(ls.cmds))
	}
	jsonEqual(t, []byte(ls.cmds[0]), `{"lookup": {"table": "fluss.t"}}`)
	if fmt.Sprint(ls.keyCounts) != "[3 1 0 2]" {
		t.Errorf("the server got key batches of %v rows, want [3 1 0 2]", ls.keyCounts)
	}
}

func TestLookupDescriptorJSON(t *testing.T) {
	ls, c, mem := startLookupServer(t)
	defer mem.AssertSize(t, 0)
	ctx := testCtx(t)
	for _, tc := range []struct {
		req  LookupRequest
		want string
	}{
		{LookupRequest{Table: "fluss.t", Columns: []string{"name"}, Prefix: true},
			`{"lookup": {"table": "fluss.t", "columns": ["name"], "prefix": true}}`},
		{LookupRequest{Table: "fluss.t", InsertIfNotExists: true},
			`{"lookup": {"table": "fluss.t", "insert_if_not_exists": true}}`},
	} {
		l, err := c.Lookup(ctx, tc.req)
		if err != nil {
			t.Fatal(err)
		}
		keys := keyBatch(mem, 2, 3)
		ans, _, err := l.Lookup(keys)
		keys.Release()
		if err != nil {
			t.Fatal(err)
		}
		if tc.req.Prefix {
			if got := rowsOf(t, ans); got != "0:n-2.0 0:n-2.1" {
				t.Errorf("prefix lookup of name = %q", got)
			}
		}
		ans.Release()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		ls.mu.Lock()
		jsonEqual(t, []byte(ls.cmds[len(ls.cmds)-1]), tc.want)
		ls.mu.Unlock()
	}
	if _, err := c.Lookup(ctx, LookupRequest{}); err == nil {
		t.Error("a lookup without a table was accepted")
	}
}

func TestLookupPipelined(t *testing.T) {
	ls, c, mem := startLookupServer(t)
	defer mem.AssertSize(t, 0)
	ctx := testCtx(t)
	// A small in-flight limit and one goroutine: Send must not deadlock
	// while answers queue up unread.
	l, err := c.Lookup(ctx, LookupRequest{Table: "fluss.t", Columns: []string{"id"}}, WithLookupMaxInFlight(2))
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	for i := range n {
		keys := keyBatch(mem, int64(2*i), int64(2*i+1), int64(2*i+2))
		if err := l.Send(keys); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		keys.Release()
	}
	if got := l.Pending(); got != n {
		t.Errorf("Pending = %d, want %d", got, n)
	}
	empty := keyBatch(mem)
	if _, _, err := l.Lookup(empty); err == nil {
		t.Error("Lookup with Send answers outstanding was accepted")
	}
	empty.Release()
	for i := range n {
		ans, meta, err := l.Recv()
		if err != nil {
			t.Fatalf("recv %d: %v", i, err)
		}
		want := fmt.Sprintf("0:%d 2:%d", 2*i, 2*i+2)
		if got := rowsOf(t, ans); got != want || meta.Keys != 3 || meta.Rows != 2 {
			t.Errorf("answer %d = %q %+v, want %q (answers in Send order)", i, got, meta, want)
		}
		ans.Release()
	}
	// Answers left unread are released by Close.
	for i := range 5 {
		keys := keyBatch(mem, int64(i))
		if err := l.Send(keys); err != nil {
			t.Fatal(err)
		}
		keys.Release()
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ls.mu.Lock()
	if len(ls.keyCounts) != n+5 {
		t.Errorf("the server got %d key batches, want %d", len(ls.keyCounts), n+5)
	}
	ls.mu.Unlock()
}

func TestLookupConcurrentRecv(t *testing.T) {
	_, c, mem := startLookupServer(t)
	defer mem.AssertSize(t, 0)
	ctx := testCtx(t)
	l, err := c.Lookup(ctx, LookupRequest{Table: "fluss.t"}, WithLookupMaxInFlight(4))
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	var got []int
	done := make(chan error, 1)
	go func() {
		for {
			ans, meta, err := l.Recv()
			if errors.Is(err, io.EOF) {
				done <- nil
				return
			}
			if err != nil {
				done <- err
				return
			}
			got = append(got, meta.Keys)
			ans.Release()
		}
	}()
	for i := range n {
		ids := make([]int64, i%7)
		for j := range ids {
			ids[j] = int64(j)
		}
		keys := keyBatch(mem, ids...)
		if err := l.Send(keys); err != nil {
			t.Fatal(err)
		}
		keys.Release()
	}
	if err := l.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d answers, want %d", len(got), n)
	}
	for i, k := range got {
		if k != i%7 {
			t.Fatalf("answer %d is for %d keys, want %d (answers in Send order)", i, k, i%7)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLookupErrors(t *testing.T) {
	_, c, mem := startLookupServer(t)
	defer mem.AssertSize(t, 0)
	ctx := testCtx(t)

	// An unknown table fails the first lookup, with the server's code.
	l, err := c.Lookup(ctx, LookupRequest{Table: "fluss.missing"})
	if err != nil {
		t.Fatal(err)
	}
	keys := keyBatch(mem, 1)
	_, _, err = l.Lookup(keys)
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "lookup fluss.missing") {
		t.Errorf("lookup of a missing table: %v, want NOT_FOUND", err)
	}
	if err := l.Send(keys); status.Code(err) != codes.NotFound {
		t.Errorf("send after the failure: %v, want the same NOT_FOUND", err)
	}
	if err := l.Close(); status.Code(err) != codes.NotFound {
		t.Errorf("close: %v, want NOT_FOUND", err)
	}
	keys.Release()

	// A bad key mid-stream: earlier answers arrive, the rest fail.
	l, err = c.Lookup(ctx, LookupRequest{Table: "fluss.t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ids := range [][]int64{{2}, {-1}, {4}} {
		keys := keyBatch(mem, ids...)
		err := l.Send(keys)
		keys.Release()
		if err != nil && status.Code(err) != codes.InvalidArgument {
			t.Fatalf("send %v: %v", ids, err)
		}
	}
	ans, _, err := l.Recv()
	if err != nil {
		t.Fatalf("the answer before the bad batch: %v", err)
	}
	ans.Release()
	if _, _, err := l.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("answer to the bad batch: %v, want INVALID_ARGUMENT", err)
	}
	if err := l.Close(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("close: %v, want INVALID_ARGUMENT", err)
	}

	// Unknown command fields come back as the server says.
	l, err = c.LookupDescriptor(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD,
		Cmd: []byte(`{"lookup": {"table": "fluss.t", "bogus": 1}}`)})
	if err != nil {
		t.Fatal(err)
	}
	keys = keyBatch(mem, 2)
	if _, _, err := l.Lookup(keys); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown field: %v, want INVALID_ARGUMENT naming it", err)
	}
	keys.Release()
	_ = l.Close()

	// A server that ends the stream without answering.
	l, err = c.Lookup(ctx, LookupRequest{Table: "fluss.silent"})
	if err != nil {
		t.Fatal(err)
	}
	keys = keyBatch(mem, 2)
	if err := l.Send(keys); err != nil {
		t.Fatal(err)
	}
	keys.Release()
	if err := l.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Recv(); status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "missing") {
		t.Errorf("no answer: %v, want INTERNAL about the missing answer", err)
	}
	_ = l.Close()

	// Key batches of another schema are refused by the client.
	l, err = c.Lookup(ctx, LookupRequest{Table: "fluss.t"})
	if err != nil {
		t.Fatal(err)
	}
	keys = keyBatch(mem, 2)
	ans, _, err = l.Lookup(keys)
	keys.Release()
	if err != nil {
		t.Fatal(err)
	}
	ans.Release()
	other := makeRecord(mem, 0, 1)
	if err := l.Send(other); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("a batch of another schema: %v", err)
	}
	other.Release()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Closing a lookuper that never sent anything is fine.
	l, err = c.Lookup(ctx, LookupRequest{Table: "fluss.t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLookupInline(t *testing.T) {
	ls, c, mem := startLookupServer(t)
	defer mem.AssertSize(t, 0)
	ctx := testCtx(t)

	tbl, err := c.LookupInline(ctx, LookupRequest{Table: "fluss.t", Columns: []string{"name", "id"}},
		[]map[string]any{{"id": 4}, {"id": 5}, {"id": 6}})
	if err != nil {
		t.Fatal(err)
	}
	rec := tableRecord(t, tbl, mem)
	if got := rowsOf(t, rec); got != "0:n-4.0:4 2:n-6.0:6" {
		t.Errorf("inline lookup = %q", got)
	}
	rec.Release()
	tbl.Release()

	// No keys: an empty table with the answer's schema.
	tbl, err = c.LookupInline(ctx, LookupRequest{Table: "fluss.t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.NumRows() != 0 || tbl.Schema().NumFields() != 3 {
		t.Errorf("inline lookup of no keys: %d rows, schema %s", tbl.NumRows(), tbl.Schema())
	}
	tbl.Release()

	if _, err := c.LookupInline(ctx, LookupRequest{Table: "fluss.missing"}, []map[string]any{{"id": 1}}); status.Code(err) != codes.NotFound {
		t.Errorf("inline lookup of a missing table: %v, want NOT_FOUND", err)
	}
	if _, err := c.LookupInline(ctx, LookupRequest{Table: "fluss.t"}, []map[string]any{{"id": -1}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("inline lookup of a bad key: %v, want INVALID_ARGUMENT", err)
	}

	ls.mu.Lock()
	defer ls.mu.Unlock()
	jsonEqual(t, []byte(ls.cmds[0]), `{"lookup": {"table": "fluss.t", "columns": ["name", "id"], "keys": [{"id": 4}, {"id": 5}, {"id": 6}]}}`)
	jsonEqual(t, []byte(ls.cmds[1]), `{"lookup": {"table": "fluss.t", "keys": []}}`)
}

// tableRecord concatenates a table's chunks into one record.
func tableRecord(t *testing.T, tbl arrow.Table, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	cols := make([]arrow.Array, tbl.NumCols())
	for i := range cols {
		col, err := array.Concatenate(tbl.Column(i).Data().Chunks(), mem)
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = col
		defer col.Release()
	}
	return array.NewRecordBatch(tbl.Schema(), cols, tbl.NumRows())
}
