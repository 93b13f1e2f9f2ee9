package flight_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	fgflight "github.com/fluxgate-io/fluxgate/flight"
)

// testServer is an engine served over Flight on loopback, with a client.
type testServer struct {
	eng   *engine.Engine
	cl    *client.Client
	srv   flight.Server
	mem   *memory.CheckedAllocator
	dir   string
	addr  string
	opts  engine.Options
	fopts fgflight.Options
}

func start(t *testing.T, opts engine.Options) *testServer {
	t.Helper()
	return startWith(t, opts, fgflight.Options{})
}

// startWith starts a test server with Flight service options too.
func startWith(t testing.TB, opts engine.Options, fopts fgflight.Options) *testServer {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	opts.Allocator = mem
	if opts.FollowHeartbeat == 0 {
		opts.FollowHeartbeat = 200 * time.Millisecond
	}
	fopts.Allocator = mem
	if fopts.Limits.MaxMessageBytes == 0 {
		fopts.Limits.MaxMessageBytes = 8 << 20
	}
	ts := &testServer{mem: mem, dir: t.TempDir(), opts: opts, fopts: fopts}
	ts.open(t)
	t.Cleanup(func() {
		ts.close(t)
		mem.AssertSize(t, 0)
	})
	return ts
}

// open starts the engine on ts.dir, a Flight server and a client.
func (ts *testServer) open(t testing.TB) {
	t.Helper()
	eng, err := engine.Open(t.Context(), ts.dir, ts.opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := flight.NewServerWithMiddleware(nil, fgflight.ServerOptions(ts.fopts)...)
	srv.RegisterFlightService(fgflight.New(eng, ts.fopts))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.InitListener(ln)
	go srv.Serve()
	cl, err := client.Dial(context.Background(), ln.Addr().String(), client.WithAllocator(ts.mem))
	if err != nil {
		t.Fatal(err)
	}
	ts.eng, ts.cl, ts.srv, ts.addr = eng, cl, srv, ln.Addr().String()
}

func (ts *testServer) close(t testing.TB) {
	t.Helper()
	ts.cl.Close()
	ts.srv.Shutdown()
	if err := ts.eng.Close(); err != nil {
		t.Error(err)
	}
}

// restart stops the server and engine and opens them again on the same data.
func (ts *testServer) restart(t *testing.T) {
	t.Helper()
	ts.close(t)
	ts.open(t)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func wantCode(t *testing.T, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("got %v, want code %v", err, code)
	}
}

// ordersSpec is a small log table.
func ordersSpec(name string, buckets int, key string) client.TableSpec {
	opts := map[string]string{"bucket.num": fmt.Sprint(buckets)}
	if key != "" {
		opts["bucket.key"] = key
	}
	return client.TableSpec{
		Table: name,
		Columns: []client.Column{
			{Name: "order_id", Type: "BIGINT", Nullable: new(false)},
			{Name: "item", Type: "STRING"},
			{Name: "amount", Type: "DOUBLE"},
		},
		Options: opts,
	}
}

var ordersSchema = arrow.NewSchema([]arrow.Field{
	{Name: "order_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "item", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

func orders(mem memory.Allocator, from, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, ordersSchema)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("item-%d", i%7))
		b.Field(2).(*array.Float64Builder).Append(float64(i) * 1.5)
	}
	return b.NewRecordBatch()
}

// write appends batches of n rows starting at ids from, from+n, ...
func write(t *testing.T, ts *testServer, table string, from, n, batches int) []client.PutResult {
	t.Helper()
	w, err := ts.cl.NewWriter(ctxT(t), client.WriteRequest{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	var res []client.PutResult
	for i := range batches {
		rec := orders(ts.mem, from+i*n, n)
		r, err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return res
}

// ids reads a scan and returns the order ids, sorted by bucket then offset.
func ids(t *testing.T, ts *testServer, req client.ScanRequest) []int64 {
	t.Helper()
	sc, err := ts.cl.Scan(ctxT(t), req, client.WithConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	var out []int64
	for sc.Next() {
		rec := sc.RecordBatch()
		col := rec.Column(rec.Schema().FieldIndices("order_id")[0]).(*array.Int64)
		out = append(out, col.Int64Values()...)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWriteAndReadBack(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("fluss.orders", 3, "order_id"), false); err != nil {
		t.Fatal(err)
	}
	res := write(t, ts, "fluss.orders", 0, 100, 5)
	total := int64(0)
	for _, r := range res {
		total += r.Rows
	}
	if total != 500 {
		t.Fatalf("acknowledged %d rows, want 500", total)
	}
	got := ids(t, ts, client.ScanRequest{Table: "fluss.orders"})
	if len(got) != 500 {
		t.Fatalf("read %d rows, want 500", len(got))
	}
	seen := map[int64]bool{}
	for _, id := range got {
		seen[id] = true
	}
	if len(seen) != 500 {
		t.Fatalf("read %d distinct ids, want 500", len(seen))
	}
}
