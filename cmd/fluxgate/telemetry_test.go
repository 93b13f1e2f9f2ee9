package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/server"
)

// fakeCollector is an OTLP/gRPC trace collector that keeps the spans it is
// sent: span name → its fluxgate.table attribute ("" without one).
type fakeCollector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans map[string]string
}

func (c *fakeCollector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				table := ""
				for _, a := range s.GetAttributes() {
					if a.GetKey() == "fluxgate.table" {
						table = a.GetValue().GetStringValue()
					}
				}
				c.spans[s.GetName()] = table
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// TestTelemetry serves with --otlp-endpoint pointing at a fake collector,
// writes and scans a table, and checks /metrics and, after Stop flushed them,
// the exported RPC spans with the table.
func TestTelemetry(t *testing.T) {
	col := &fakeCollector{spans: map[string]string{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(gs, col)
	go gs.Serve(ln)
	defer gs.Stop()

	cfg, err := parseServeFlags([]string{"--data", t.TempDir(), "--listen", "127.0.0.1:0", "--http", "",
		"--otlp-endpoint", ln.Addr().String(), "--otlp-insecure"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(t.Context(), &cfg.Config, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.Stop()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, srv.FlightAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateTable(ctx, client.TableSpec{Table: "events", Columns: []client.Column{{Name: "id", Type: "BIGINT", Nullable: new(false)}},
		Options: map[string]string{"table.datalake.enabled": "true"}}, false); err != nil {
		t.Fatal(err)
	}
	w, err := c.NewWriter(ctx, client.WriteRequest{Table: "events"})
	if err != nil {
		t.Fatal(err)
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rb := array.NewRecordBuilder(memtest.Allocator(t), sc)
	rb.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3, 4, 5}, nil)
	rec := rb.NewRecordBatch()
	rb.Release()
	_, err = w.Write(rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	scan, err := c.Scan(ctx, client.ScanRequest{Table: "events"})
	if err != nil {
		t.Fatal(err)
	}
	rows := int64(0)
	for scan.Next() {
		rows += scan.RecordBatch().NumRows()
	}
	if err := scan.Err(); err != nil {
		t.Fatal(err)
	}
	scan.Release()
	if rows != 5 {
		t.Fatalf("scan read %d rows, want 5", rows)
	}
	if _, err := c.TierNow(ctx, "events"); err != nil {
		t.Fatal(err)
	}

	// /metrics: the server records an RPC's duration as the RPC ends, which
	// may be just after the client saw its end.
	wants := []string{
		`rpc_server_call_duration_seconds_bucket{`,
		`rpc_method="arrow.flight.protocol.FlightService/DoGet"`,
		`fluxgate_bytes_read_total{otel_scope_name="github.com/fluxgate-io/fluxgate/engine",otel_scope_schema_url="",otel_scope_version="",table="fluss.events"}`,
		// The lake tier's: one round wrote one data file of the 5 rows and
		// left nothing behind.
		`fluxgate_lake_files_written_total{otel_scope_name="github.com/fluxgate-io/fluxgate/engine",otel_scope_schema_url="",otel_scope_version="",table="fluss.events"} 1`,
		`fluxgate_lake_rows_tiered_total{otel_scope_name="github.com/fluxgate-io/fluxgate/engine",otel_scope_schema_url="",otel_scope_version="",table="fluss.events"} 5`,
		`fluxgate_lake_lag_offsets{otel_scope_name="github.com/fluxgate-io/fluxgate/engine",otel_scope_schema_url="",otel_scope_version="",table="fluss.events"} 0`,
		`fluxgate_lake_round_duration_seconds_count{otel_scope_name="github.com/fluxgate-io/fluxgate/engine",otel_scope_schema_url="",otel_scope_version="",table="fluss.events"} 1`,
	}
	for {
		rec := httptest.NewRecorder()
		srv.Telemetry().MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		body := rec.Body.String()
		missing := ""
		for _, want := range wants {
			if !strings.Contains(body, want) {
				missing = want
			}
		}
		if missing == "" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("/metrics lacks %s:\n%s", missing, body)
		case <-time.After(10 * time.Millisecond):
		}
	}

	// Stop flushes the batched spans to the collector.
	c.Close()
	stopped = true
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, rpc := range []string{"DoGet", "DoPut", "GetFlightInfo", "DoAction"} {
		name := "arrow.flight.protocol.FlightService/" + rpc
		table, ok := col.spans[name]
		switch {
		case !ok:
			t.Errorf("no %s span exported; got %v", name, col.spans)
		case table != "fluss.events":
			t.Errorf("%s span: fluxgate.table = %q, want fluss.events", name, table)
		}
	}
}
