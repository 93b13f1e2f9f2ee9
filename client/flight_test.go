package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// fakeServer answers with canned, protocol-shaped messages and records what
// the client sent.
type fakeServer struct {
	flight.BaseFlightServer
	mem memory.Allocator

	mu          sync.Mutex
	actions     []*flight.Action
	infoDescs   []*flight.FlightDescriptor
	putDescs    []*flight.FlightDescriptor
	putRows     []int64
	authHeaders []string
	// failPutAt makes DoPut fail with INVALID_ARGUMENT when it gets this
	// batch (0-based); -1 never.
	failPutAt int
}

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func (s *fakeServer) recordAuth(ctx context.Context) {
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	s.authHeaders = append(s.authHeaders, strings.Join(md.Get("authorization"), ","))
	s.mu.Unlock()
}

func (s *fakeServer) DoAction(a *flight.Action, st flight.FlightService_DoActionServer) error {
	s.recordAuth(st.Context())
	s.mu.Lock()
	s.actions = append(s.actions, a)
	s.mu.Unlock()
	var result string
	switch a.Type {
	case ActionCreateDatabase:
		var body struct {
			Database string `json:"database"`
		}
		_ = json.Unmarshal(a.Body, &body)
		if body.Database == "fluss" {
			return status.Error(codes.AlreadyExists, "database fluss already exists")
		}
		result = fmt.Sprintf(`{"database": %q}`, body.Database)
	case ActionListDatabases: // in two pages
		result = `{"databases": ["fluss"], "next_page_token": "p2"}`
		if strings.Contains(string(a.Body), `"p2"`) {
			result = `{"databases": ["d"]}`
		}
	case ActionDescribeTable, ActionCreateTable:
		var body struct {
			Table string `json:"table"`
		}
		_ = json.Unmarshal(a.Body, &body)
		if body.Table == "fluss.missing" {
			return status.Error(codes.NotFound, "table fluss.missing not found")
		}
		result = fmt.Sprintf(`{"table": %q, "columns": [{"name": "id", "type": "BIGINT", "nullable": false},
			{"name": "name", "type": "STRING", "nullable": true}], "primary_key": ["id"], "partition_keys": [],
			"options": {"bucket.num": "2"}, "table_id": 7, "schema_id": 1, "created_at": 1764460800000,
			"kind": "primary_key", "indexes": [{"name": "primary_key", "columns": ["id"]}]}`, body.Table)
	case ActionListTables:
		result = `{"tables": [{"table": "fluss.a", "columns": [], "kind": "log", "table_id": 1}]}`
	case ActionListOffsets:
		result = `{"offsets": {"0": 12, "1": 40}}`
	case ActionDropTable, ActionDropDatabase:
		result = `{}`
	default:
		return status.Errorf(codes.Unimplemented, "unknown action %q", a.Type)
	}
	return st.Send(&flight.Result{Body: []byte(result)})
}

func (s *fakeServer) GetFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	s.recordAuth(ctx)
	s.mu.Lock()
	s.infoDescs = append(s.infoDescs, d)
	s.mu.Unlock()
	table := strings.Join(d.Path, ".")
	var stop any = 3 // rows per bucket
	if d.Type == flight.DescriptorCMD {
		var cmd struct {
			Scan ScanRequest `json:"scan"`
		}
		if err := json.Unmarshal(d.Cmd, &cmd); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "bad command: %v", err)
		}
		table = cmd.Scan.Table
		if cmd.Scan.Stop.IsUnbounded() {
			stop = nil
		}
	}
	if table == "fluss.missing" {
		return nil, status.Error(codes.NotFound, "table fluss.missing not found")
	}
	info := &flight.FlightInfo{
		Schema:           flight.SerializeSchema(testSchema, s.mem),
		FlightDescriptor: d,
		TotalRecords:     -1,
		AppMetadata:      []byte(`{"table_id": 7, "schema_id": 1, "buckets": 2, "lake_snapshot_id": null}`),
	}
	for b := 0; b < 2; b++ {
		tk, _ := json.Marshal(map[string]any{"v": 1, "table_id": 7, "table": table, "view": "log", "bucket": b,
			"start": 0, "stop": stop, "lake_snapshot_id": nil, "limit": nil})
		info.Endpoint = append(info.Endpoint, &flight.FlightEndpoint{Ticket: &flight.Ticket{Ticket: tk}})
	}
	return info, nil
}

// DoGet sends three rows of the ticket's bucket as a batch of two and a
// batch of one, then, for an unbounded ticket, an empty batch every 10 ms
// until the client goes away.
func (s *fakeServer) DoGet(tk *flight.Ticket, st flight.FlightService_DoGetServer) error {
	s.recordAuth(st.Context())
	var t Ticket
	if err := json.Unmarshal(tk.Ticket, &t); err != nil {
		return status.Errorf(codes.InvalidArgument, "bad ticket: %v", err)
	}
	if t.Table == "fluss.gone" {
		return status.Error(codes.NotFound, "table id 7 no longer exists")
	}
	opts := []ipc.Option{ipc.WithSchema(testSchema), ipc.WithAllocator(s.mem)}
	switch t.Compression {
	case "zstd":
		opts = append(opts, ipc.WithZstd())
	case "lz4_frame":
		opts = append(opts, ipc.WithLZ4())
	}
	w := flight.NewRecordWriter(st, opts...)
	defer w.Close()
	send := func(start int64, ids ...int64) error {
		bld := array.NewRecordBuilder(s.mem, testSchema)
		defer bld.Release()
		for _, id := range ids {
			bld.Field(0).(*array.Int64Builder).Append(int64(t.Bucket)*100 + id)
			bld.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("b%d-%d", t.Bucket, id))
		}
		rec := bld.NewRecordBatch()
		defer rec.Release()
		md := fmt.Sprintf(`{"bucket": %d, "start": %d, "next": %d, "high_watermark": 3}`, t.Bucket, start, start+int64(len(ids)))
		return w.WriteWithAppMetadata(rec, []byte(md))
	}
	if err := send(0, 0, 1); err != nil {
		return err
	}
	if err := send(2, 2); err != nil {
		return err
	}
	if t.Stop != nil {
		return nil
	}
	for {
		select {
		case <-st.Context().Done():
			return st.Context().Err()
		case <-time.After(10 * time.Millisecond):
			if err := send(3); err != nil {
				return err
			}
		}
	}
}

// DoPut acknowledges each batch with its row count and bucket 0's end offset.
func (s *fakeServer) DoPut(st flight.FlightService_DoPutServer) error {
	s.recordAuth(st.Context())
	rdr, err := flight.NewRecordReader(st, ipc.WithAllocator(s.mem))
	if err != nil {
		return err
	}
	defer rdr.Release()
	s.mu.Lock()
	s.putDescs = append(s.putDescs, rdr.LatestFlightDescriptor())
	failAt := s.failPutAt
	s.mu.Unlock()
	var seq, end int64
	for rdr.Next() {
		rows := rdr.RecordBatch().NumRows()
		if int(seq) == failAt {
			return status.Errorf(codes.InvalidArgument, "null in NOT NULL column id of batch %d", seq)
		}
		s.mu.Lock()
		s.putRows = append(s.putRows, rows)
		s.mu.Unlock()
		end += rows
		md := fmt.Sprintf(`{"sequence": %d, "rows": %d, "buckets": {"0": %d}}`, seq, rows, end)
		if err := st.Send(&flight.PutResult{AppMetadata: []byte(md)}); err != nil {
			return err
		}
		seq++
	}
	return rdr.Err()
}

type testValidator struct{}

func (testValidator) Validate(user, pass string) (string, error) {
	if user == "fluss" && pass == "secret" {
		return "tok-fluss", nil
	}
	return "", status.Error(codes.Unauthenticated, "bad credentials")
}

func (testValidator) IsValid(tok string) (any, error) {
	if tok == "tok-fluss" {
		return "fluss", nil
	}
	return nil, status.Error(codes.Unauthenticated, "bad token")
}

// startServer runs a fakeServer on a loopback port and returns a client
// dialled to it with a checked allocator.
func startServer(t *testing.T, auth bool, opts ...Option) (*fakeServer, *Client, *memory.CheckedAllocator) {
	t.Helper()
	fs := &fakeServer{mem: memtest.Allocator(t), failPutAt: -1}
	var mw []flight.ServerMiddleware
	if auth {
		mw = append(mw, flight.CreateServerBasicAuthMiddleware(testValidator{}))
	}
	srv := flight.NewServerWithMiddleware(mw)
	if err := srv.Init("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	srv.RegisterFlightService(fs)
	go srv.Serve()
	t.Cleanup(srv.Shutdown)

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, "grpc://"+srv.Addr().String(), append([]Option{WithAllocator(mem)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return fs, c, mem
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestParseAddr: the address forms of FLUXGATE_ADDR, as the CLI, the Python
// package and the Java client take them; TLS options turn a bare host:port to
// TLS and refuse an address that says plain gRPC.
func TestParseAddr(t *testing.T) {
	for _, tc := range []struct {
		in      string
		withTLS bool
		target  string
		tls     bool
		bad     bool
	}{
		{in: "127.0.0.1:8815", target: "127.0.0.1:8815"},
		{in: "grpc://localhost:1", target: "localhost:1"},
		{in: "grpc://localhost:1/", target: "localhost:1"},
		{in: "grpc+tcp://localhost:1", target: "localhost:1"},
		{in: "grpc+tls://example.com:443", target: "example.com:443", tls: true},
		{in: "[::1]:8815", target: "[::1]:8815"},
		{in: "", target: DefaultAddr},
		{in: "", withTLS: true, target: DefaultAddr, tls: true},
		{in: "db:8815", withTLS: true, target: "db:8815", tls: true},
		{in: "grpc+tls://db:8815", withTLS: true, target: "db:8815", tls: true},
		{in: "grpc://db:8815", withTLS: true, bad: true},
		{in: "grpc+tcp://db:8815", withTLS: true, bad: true},
		{in: "localhost", bad: true},
		{in: "grpc://localhost", bad: true},
		{in: "grpc://localhost:", bad: true},
		{in: "http://x:1", bad: true},
		{in: "grpc://", bad: true},
		{in: "grpc://x:1/path", bad: true},
	} {
		target, tls, err := parseAddr(tc.in, tc.withTLS)
		if (err != nil) != tc.bad || target != tc.target || tls != tc.tls {
			t.Errorf("parseAddr(%q, TLS options %v) = %q, %v, %v", tc.in, tc.withTLS, target, tls, err)
		}
	}
}

// TestDialRefusesPlainAddressWithTLS: Dial says why, instead of speaking TLS
// to an address the user wrote as plain gRPC.
func TestDialRefusesPlainAddressWithTLS(t *testing.T) {
	_, err := Dial(testCtx(t), "grpc://127.0.0.1:8815", WithTLS(&tls.Config{MinVersion: tls.VersionTLS12}))
	if err == nil || !strings.Contains(err.Error(), "use grpc+tls://127.0.0.1:8815") {
		t.Fatalf("Dial(grpc://, WithTLS) = %v, want an error naming grpc+tls://", err)
	}
}

func TestActions(t *testing.T) {
	fs, c, _ := startServer(t, false)
	ctx := testCtx(t)

	info, err := c.DescribeTable(ctx, "fluss.orders")
	if err != nil {
		t.Fatal(err)
	}
	if info.TableID != 7 || !info.HasPrimaryKey() || len(info.Columns) != 2 || info.Columns[0].IsNullable() {
		t.Errorf("describe = %+v", info)
	}
	if _, err := c.CreateTable(ctx, TableSpec{Table: "fluss.orders", Columns: info.Columns, PrimaryKey: []string{"id"}}, true); err != nil {
		t.Fatal(err)
	}
	dbs, err := c.ListDatabases(ctx)
	if err != nil || strings.Join(dbs, ",") != "fluss,d" {
		t.Errorf("databases = %v, %v", dbs, err)
	}
	tables, err := c.ListTables(ctx, "")
	if err != nil || len(tables) != 1 || tables[0].Table != "fluss.a" || tables[0].Kind != TableKindLog {
		t.Errorf("tables = %+v, %v", tables, err)
	}
	offs, err := c.ListOffsets(ctx, "fluss.orders", Earliest, []int{0, 1})
	if err != nil || offs[0] != 12 || offs[1] != 40 {
		t.Errorf("offsets = %v, %v", offs, err)
	}
	if err := c.CreateDatabase(ctx, "d", true); err != nil {
		t.Fatal(err)
	}
	if err := c.DropTable(ctx, "fluss.orders", true); err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if err := c.Action(ctx, ActionListDatabases, json.RawMessage(`{"page_token": "p2"}`), &raw); err != nil || !strings.Contains(string(raw), `"d"`) {
		t.Errorf("raw action = %s, %v", raw, err)
	}

	fs.mu.Lock()
	defer fs.mu.Unlock()
	bodies := map[string]string{}
	for _, a := range fs.actions {
		bodies[a.Type] = string(a.Body)
	}
	for name, want := range map[string]string{
		ActionDescribeTable:  `{"table": "fluss.orders"}`,
		ActionListDatabases:  `{"page_token": "p2"}`, // the last page's
		ActionListTables:     `{}`,
		ActionListOffsets:    `{"table": "fluss.orders", "at": "earliest", "buckets": [0, 1]}`,
		ActionCreateDatabase: `{"database": "d", "if_not_exists": true}`,
		ActionDropTable:      `{"table": "fluss.orders", "if_exists": true}`,
		ActionCreateTable: `{"table": "fluss.orders", "columns": [{"name": "id", "type": "BIGINT", "nullable": false},
			{"name": "name", "type": "STRING", "nullable": true}], "primary_key": ["id"], "if_not_exists": true}`, // as described
	} {
		jsonEqual(t, []byte(bodies[name]), want)
	}
}

// TestErrorCodes checks that every kind of call keeps the server's status
// code through the client's wrapping.
func TestErrorCodes(t *testing.T) {
	_, c, mem := startServer(t, false)
	defer mem.AssertSize(t, 0)
	ctx := testCtx(t)

	check := func(what string, err error, want codes.Code) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		if got := status.Code(err); got != want {
			t.Errorf("%s: status.Code = %v, want %v (err %v)", what, got, want, err)
		}
		var se interface{ GRPCStatus() *status.Status }
		if !errors.As(err, &se) {
			t.Errorf("%s: no GRPCStatus in the chain of %v", what, err)
		}
	}
	_, err := c.DescribeTable(ctx, "fluss.missing")
	check("describe", err, codes.NotFound)
	if !strings.Contains(err.Error(), "fluss.missing") {
		t.Errorf("error %q does not name the table", err)
	}
	check("create-database", c.CreateDatabase(ctx, "fluss", false), codes.AlreadyExists)
	check("unknown action", c.Action(ctx, "frobnicate", nil, nil), codes.Unimplemented)
	_, err = c.Plan(ctx, ScanRequest{Table: "fluss.missing"})
	check("plan", err, codes.NotFound)
	_, err = c.Scan(ctx, ScanRequest{Table: "fluss.missing"})
	check("scan", err, codes.NotFound)
	_, err = c.ReadAll(ctx, ScanRequest{Table: "fluss.missing"})
	check("read all", err, codes.NotFound)

	// An error on DoGet shows up when the stream is read.
	tk, _ := Ticket{Table: "fluss.gone"}.Encode()
	s, err := c.ReadTicket(ctx, tk)
	if err != nil {
		t.Fatal(err)
	}
	for s.Next() {
	}
	check("read ticket", s.Err(), codes.NotFound)
	s.Release()

	_, err = c.ReadAll(ctx, ScanRequest{Table: "fluss.gone"})
	check("read all of a gone table", err, codes.NotFound)

	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.DescribeTable(ctx2, "fluss.orders")
	check("cancelled", err, codes.Canceled)
}

func TestScan(t *testing.T) {
	fs, c, mem := startServer(t, false)
	defer mem.AssertSize(t, 0)
	ctx := testCtx(t)

	req := ScanRequest{Table: "fluss.orders", Columns: []string{"id", "name"}, Startup: Earliest}
	plan, err := c.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Schema.Equal(testSchema) || len(plan.Endpoints) != 2 || plan.TotalRecords != -1 ||
		plan.Meta.TableID != 7 || plan.Meta.Buckets != 2 || plan.Meta.LakeSnapshotID != nil {
		t.Errorf("plan = %+v", plan)
	}
	if d := plan.Endpoints[1].Decoded; d == nil || d.Bucket != 1 || d.Stop == nil || *d.Stop != 3 {
		t.Errorf("decoded ticket = %+v", d)
	}
	fs.mu.Lock()
	jsonEqual(t, fs.infoDescs[0].Cmd, `{"scan": {"table": "fluss.orders", "columns": ["id", "name"], "startup": "earliest"}}`)
	fs.mu.Unlock()

	// One ticket, in turn.
	s, err := c.ReadTicket(ctx, plan.Endpoints[1].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	var metas []BatchMeta
	var rows int64
	if !s.Schema().Equal(testSchema) {
		t.Errorf("stream schema = %s", s.Schema())
	}
	for s.Next() {
		rows += s.RecordBatch().NumRows()
		metas = append(metas, s.Meta())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	s.Release()
	want := []BatchMeta{{Bucket: 1, Start: 0, Next: 2, HighWatermark: 3}, {Bucket: 1, Start: 2, Next: 3, HighWatermark: 3}}
	if rows != 3 || fmt.Sprint(metas) != fmt.Sprint(want) {
		t.Errorf("rows %d metas %v, want 3 %v", rows, metas, want)
	}

	// All tickets, merged.
	tbl, err := c.ReadAll(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.NumRows() != 6 || tbl.NumCols() != 2 {
		t.Errorf("table has %d rows, %d columns", tbl.NumRows(), tbl.NumCols())
	}
	tbl.Release()

	// The default scan through a PATH descriptor.
	plan, err = c.PlanTable(ctx, "fluss.orders")
	if err != nil || len(plan.Endpoints) != 2 {
		t.Fatalf("plan table: %+v %v", plan, err)
	}
	fs.mu.Lock()
	if d := fs.infoDescs[len(fs.infoDescs)-1]; d.Type != flight.DescriptorPATH || strings.Join(d.Path, "/") != "fluss/orders" {
		t.Errorf("descriptor = %v", d)
	}
	fs.mu.Unlock()
	sc := c.ScanPlanned(ctx, plan)
	n := 0
	for sc.Next() {
		n += int(sc.RecordBatch().NumRows())
	}
	if sc.Err() != nil || n != 6 {
		t.Errorf("scan planned: %d rows, %v", n, sc.Err())
	}
	sc.Release()
}

// planOrders starts the fake server and plans a scan of fluss.orders.
func planOrders(t *testing.T) (*Client, *ScanPlan) {
	t.Helper()
	_, c, mem := startServer(t, false)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	plan, err := c.Plan(testCtx(t), ScanRequest{Table: "fluss.orders"})
	if err != nil {
		t.Fatal(err)
	}
	return c, plan
}

// followZstd redeems ep's ticket made unbounded and asking for ZSTD batches.
func followZstd(t *testing.T, c *Client, ep Endpoint) *TicketStream {
	t.Helper()
	tk := *ep.Decoded
	tk.Stop, tk.Compression = nil, "zstd" // the fake server then sends a batch every 10 ms
	b, err := tk.Encode()
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.ReadTicket(testCtx(t), b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Batches that arrive ZSTD-compressed (here by arrow-go's writer, as any
// Arrow server compresses them), or LZ4-compressed, read as the uncompressed
// ones do, bounded or following, and releasing a following stream stops its
// receiving.
func TestScanZstdBatches(t *testing.T) {
	c, plan := planOrders(t)
	ctx := testCtx(t)
	var want []string
	for _, ep := range plan.Endpoints {
		tk := *ep.Decoded
		for _, compression := range []string{"", "zstd", "lz4_frame"} {
			tk.Compression = compression
			b, err := tk.Encode()
			if err != nil {
				t.Fatal(err)
			}
			s, err := c.ReadTicket(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for s.Next() {
				rec := s.RecordBatch()
				for i := range int(rec.NumRows()) {
					got = append(got, fmt.Sprintf("%d %s %+v", rec.Column(0).(*array.Int64).Value(i), rec.Column(1).(*array.String).Value(i), s.Meta()))
				}
			}
			if err := s.Err(); err != nil {
				t.Fatalf("%q: %v", compression, err)
			}
			s.Release()
			if compression == "" {
				want = got
			} else if len(got) != 3 || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s batches read\n%q\nwant\n%q", compression, got, want)
			}
		}
	}
	before := runtime.NumGoroutine()
	for range 5 {
		s := followZstd(t, c, plan.Endpoints[0])
		for range 4 {
			if !s.Next() {
				t.Fatal(s.Err())
			}
		}
		time.Sleep(50 * time.Millisecond) // batches keep coming: the receiver waits to hand one on
		s.Release()
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after releasing the streams, %d before", runtime.NumGoroutine(), before)
		}
	}
}

func TestScanUnbounded(t *testing.T) {
	_, c, mem := startServer(t, false)
	defer mem.AssertSize(t, 0)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	s, err := c.Scan(ctx, ScanRequest{Table: "fluss.orders", Stop: Unbounded})
	if err != nil {
		t.Fatal(err)
	}
	// Both buckets must make progress although neither ever ends.
	seen := map[int]int64{}
	for s.Next() {
		m := s.Meta()
		seen[m.Bucket] += s.RecordBatch().NumRows()
		if seen[0] == 3 && seen[1] == 3 && m.Next == 3 {
			cancel()
			break
		}
	}
	if seen[0] != 3 || seen[1] != 3 {
		t.Errorf("rows per bucket = %v", seen)
	}
	for s.Next() { // after cancel the scanner ends
	}
	if code := status.Code(s.Err()); s.Err() != nil && code != codes.Canceled {
		t.Errorf("err after cancel = %v", s.Err())
	}
	s.Release()

	// Releasing a following scanner without cancelling its context ends it too.
	s, err = c.Scan(testCtx(t), ScanRequest{Table: "fluss.orders", Stop: Unbounded})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Next() {
		t.Fatal(s.Err())
	}
	s.Release()

	if _, err := c.ReadAll(ctx, ScanRequest{Table: "t", Stop: Unbounded}); err == nil {
		t.Error("ReadAll of an unbounded scan accepted")
	}
}

func makeRecord(mem memory.Allocator, from, n int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(mem, testSchema)
	defer bld.Release()
	for i := from; i < from+n; i++ {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		bld.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%d", i))
	}
	return bld.NewRecordBatch()
}

func TestWriter(t *testing.T) {
	fs, c, mem := startServer(t, false)
	defer mem.AssertSize(t, 0)
	ctx := testCtx(t)

	// Synchronous writes through a PATH descriptor.
	w, err := c.NewWriter(ctx, WriteRequest{Table: "fluss.orders"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		rec := makeRecord(mem, i*10, 10)
		res, err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		if res.Sequence != int64(i) || res.Rows != 10 || res.Buckets[0] != int64(10*(i+1)) || res.Batches != 1 {
			t.Errorf("result %d = %+v", i, res)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// Pipelined writes with a CMD descriptor.
	req := WriteRequest{Table: "fluss.orders", Mode: ModeUpsert, WriterID: "w1", FirstSequence: 5}
	w, err = c.NewWriter(ctx, req, WithMaxInFlight(2))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		rec := makeRecord(mem, i, 1)
		if err := w.Send(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	results, err := w.Flush()
	if err != nil || len(results) != 10 || results[9].Sequence != 9 || results[9].Buckets[0] != 10 {
		t.Errorf("flush = %+v, %v", results, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// Results received by another goroutine, in order.
	w, err = c.NewWriter(ctx, WriteRequest{Table: "fluss.orders", Mode: ModeAppend})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []int64, 1)
	go func() {
		var seqs []int64
		for {
			res, err := w.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Error(err)
				}
				got <- seqs
				return
			}
			seqs = append(seqs, res.Sequence)
		}
	}()
	for i := 0; i < 5; i++ {
		rec := makeRecord(mem, i, 2)
		if err := w.Send(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if seqs := <-got; fmt.Sprint(seqs) != "[0 1 2 3 4]" {
		t.Errorf("sequences = %v", seqs)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// A writer that writes nothing sends nothing.
	w, err = c.NewWriter(ctx, WriteRequest{Table: "fluss.orders"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.putDescs) != 3 {
		t.Fatalf("%d DoPut streams with a descriptor, want 3", len(fs.putDescs))
	}
	if d := fs.putDescs[0]; d.Type != flight.DescriptorPATH || strings.Join(d.Path, "/") != "fluss/orders" {
		t.Errorf("first descriptor = %v", d)
	}
	jsonEqual(t, fs.putDescs[1].Cmd, `{"write": {"table": "fluss.orders", "mode": "upsert", "writer_id": "w1", "first_sequence": 5}}`)
	jsonEqual(t, fs.putDescs[2].Cmd, `{"write": {"table": "fluss.orders", "mode": "append"}}`)
}

func TestWriterSplitsLargeRecords(t *testing.T) {
	fs, c, mem := startServer(t, false)
	defer mem.AssertSize(t, 0)
	ctx := testCtx(t)

	rec := makeRecord(mem, 0, 1000)
	defer rec.Release()
	size := util.TotalRecordSize(rec)
	w, err := c.NewWriter(ctx, WriteRequest{Table: "fluss.orders"}, WithMaxBatchBytes(size/4))
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Write(rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 1000 || res.Batches < 4 || res.Sequence != int64(res.Batches-1) || res.Buckets[0] != 1000 {
		t.Errorf("result = %+v", res)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	var total int64
	for _, n := range fs.putRows {
		total += n
		if n > 260 {
			t.Errorf("slice of %d rows, want at most 250ish", n)
		}
	}
	fs.mu.Unlock()
	if total != 1000 {
		t.Errorf("server got %d rows", total)
	}
}

func TestWriterError(t *testing.T) {
	fs, c, mem := startServer(t, false)
	defer mem.AssertSize(t, 0)
	ctx := testCtx(t)
	fs.mu.Lock()
	fs.failPutAt = 1
	fs.mu.Unlock()

	// Synchronous: the second Write fails with the server's code.
	w, err := c.NewWriter(ctx, WriteRequest{Table: "fluss.orders"})
	if err != nil {
		t.Fatal(err)
	}
	rec := makeRecord(mem, 0, 5)
	defer rec.Release()
	if _, err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	_, err = w.Write(rec)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "fluss.orders") {
		t.Errorf("second write: %v", err)
	}
	if err := w.Close(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("close after failure: %v", err)
	}

	// Pipelined: Sends may or may not notice; Flush and Close must.
	w, err = c.NewWriter(ctx, WriteRequest{Table: "fluss.orders"})
	if err != nil {
		t.Fatal(err)
	}
	var sendErr error
	for i := 0; i < 50 && sendErr == nil; i++ {
		sendErr = w.Send(rec)
	}
	if sendErr != nil && status.Code(sendErr) != codes.InvalidArgument {
		t.Errorf("send: %v", sendErr)
	}
	results, err := w.Flush()
	if status.Code(err) != codes.InvalidArgument || len(results) != 1 {
		t.Errorf("flush = %d results, %v", len(results), err)
	}
	if err := w.Close(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("close: %v", err)
	}
}

func TestBasicAuth(t *testing.T) {
	fs, c, _ := startServer(t, true, WithBasicAuth("fluss", "secret"))
	ctx := testCtx(t)
	if _, err := c.DescribeTable(ctx, "fluss.orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Plan(ctx, ScanRequest{Table: "fluss.orders"}); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	for _, h := range fs.authHeaders {
		if h != "Bearer tok-fluss" {
			t.Errorf("authorization header %q", h)
		}
	}
	fs.mu.Unlock()

	srvAddr := strings.TrimPrefix(c.Addr(), "grpc://")
	_, err := Dial(ctx, srvAddr, WithBasicAuth("fluss", "wrong"))
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("bad password: %v", err)
	}
	anon, err := Dial(ctx, srvAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, err := anon.DescribeTable(ctx, "fluss.orders"); status.Code(err) != codes.Unauthenticated {
		t.Errorf("anonymous call: %v", err)
	}
}

// TestBearerToken: WithBearerToken sends the token on every call without a
// handshake.
func TestBearerToken(t *testing.T) {
	fs, c, _ := startServer(t, true, WithBearerToken("tok-fluss"))
	ctx := testCtx(t)
	if _, err := c.DescribeTable(ctx, "fluss.orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Plan(ctx, ScanRequest{Table: "fluss.orders"}); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	if len(fs.authHeaders) == 0 {
		t.Error("no authorization header seen")
	}
	for _, h := range fs.authHeaders {
		if h != "Bearer tok-fluss" {
			t.Errorf("authorization header %q", h)
		}
	}
	fs.mu.Unlock()
	bad, err := Dial(ctx, strings.TrimPrefix(c.Addr(), "grpc://"), WithBearerToken("tok-other"))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if _, err := bad.DescribeTable(ctx, "fluss.orders"); status.Code(err) != codes.Unauthenticated {
		t.Errorf("bad token: %v", err)
	}
}

// Decompressed batches live in recycled memory: batches kept past Next
// (Retain) stay intact while later ones are decompressed, and the memory of
// the released ones is used again.
func TestZstdBatchesKeptPastNext(t *testing.T) {
	c, plan := planOrders(t)
	s := followZstd(t, c, plan.Endpoints[1])
	var kept []arrow.RecordBatch
	var want []string
	for len(kept) < 20 && s.Next() {
		rec := s.RecordBatch()
		rec.Retain()
		kept = append(kept, rec)
		want = append(want, fmt.Sprint(rec))
	}
	s.Release()
	if len(kept) < 20 {
		t.Fatalf("read %d batches: %v", len(kept), s.Err())
	}
	for i, rec := range kept {
		if got := fmt.Sprint(rec); got != want[i] {
			t.Errorf("batch %d changed after later batches: %s, was %s", i, got, want[i])
		}
		rec.Release()
	}
}
