package flight_test

import (
	"context"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	fgflight "github.com/fluxgate-io/fluxgate/flight"
	"github.com/fluxgate-io/fluxgate/otel"
)

// TestRPCSpansCarryTable serves Flight with otelgrpc's stats handler, as
// package server does, and checks that the spans of RPCs on a table name it
// in fluxgate.table and that /metrics has the RPC latency histogram and the
// bytes scans sent.
func TestRPCSpansCarryTable(t *testing.T) {
	tel, err := otel.New(otel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	eng, err := engine.Open(t.Context(), t.TempDir(), engine.Options{Allocator: mem, Meter: tel.Meter("engine")})
	if err != nil {
		t.Fatal(err)
	}
	srv := flight.NewServerWithMiddleware(nil, grpc.StatsHandler(otelgrpc.NewServerHandler(
		otelgrpc.WithMeterProvider(tel.MeterProvider()), otelgrpc.WithTracerProvider(tp))))
	srv.RegisterFlightService(fgflight.New(eng, fgflight.Options{Allocator: mem}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.InitListener(ln)
	go srv.Serve()
	cl, err := client.Dial(context.Background(), ln.Addr().String(), client.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{eng: eng, cl: cl, mem: mem, addr: ln.Addr().String()}
	defer func() {
		cl.Close()
		srv.Shutdown()
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
		mem.AssertSize(t, 0)
	}()

	if _, err := cl.CreateTable(ctxT(t), ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 10, 3)
	if got := ids(t, ts, client.ScanRequest{Table: "orders"}); len(got) != 30 {
		t.Fatalf("scan read %d rows", len(got))
	}
	if _, err := cl.DescribeTable(ctxT(t), "orders"); err != nil {
		t.Fatal(err)
	}

	// The server ends its span after the RPC's status is sent, so the
	// client may see the end first: wait for the spans.
	want := map[string]bool{"DoGet": false, "GetFlightInfo": false, "DoAction": false}
	deadline := ctxT(t)
	for {
		for _, s := range spans.Ended() {
			rpc := s.Name()[strings.LastIndex(s.Name(), "/")+1:]
			if _, ok := want[rpc]; !ok {
				continue
			}
			for _, a := range s.Attributes() {
				if a.Key == "fluxgate.table" {
					if v := a.Value.AsString(); v != "fluss.orders" {
						t.Errorf("%s: fluxgate.table = %q", s.Name(), v)
					}
					want[rpc] = true
				}
			}
		}
		if want["DoGet"] && want["GetFlightInfo"] && want["DoAction"] {
			break
		}
		select {
		case <-time.After(10 * time.Millisecond):
			continue
		case <-deadline.Done():
			var names []string
			for _, s := range spans.Ended() {
				names = append(names, s.Name())
			}
			t.Fatalf("spans with fluxgate.table: %v; all spans: %v", want, names)
		}
	}

	// Metrics: the server records an RPC's duration when it ends, too.
	var body string
	for {
		rec := httptest.NewRecorder()
		tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		body = string(b)
		missing := ""
		for _, want := range []string{
			`rpc_server_call_duration_seconds_bucket{`,
			`rpc_method="arrow.flight.protocol.FlightService/DoGet"`,
			`rpc_method="arrow.flight.protocol.FlightService/DoAction"`,
			`fluxgate_bytes_read_total{otel_scope_name="engine",otel_scope_schema_url="",otel_scope_version="",table="fluss.orders"}`,
		} {
			if !strings.Contains(body, want) {
				missing = want
			}
		}
		if missing == "" {
			break
		}
		select {
		case <-deadline.Done():
			t.Fatalf("/metrics lacks %s:\n%s", missing, body)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
