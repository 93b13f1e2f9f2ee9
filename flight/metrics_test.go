package flight_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/otel"
)

func TestMetricsCountWritesAndOffsets(t *testing.T) {
	tel, err := otel.New(otel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(ctxT(t))
	ts := start(t, engine.Options{Meter: tel.Meter("engine")})
	if _, err := ts.cl.CreateTable(ctxT(t), ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 10, 3)
	if got := ids(t, ts, client.ScanRequest{Table: "orders"}); len(got) != 30 {
		t.Fatalf("scan read %d rows", len(got))
	}

	rec := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`fluxgate_rows_written_total{otel_scope_name="engine",otel_scope_schema_url="",otel_scope_version="",table="fluss.orders"} 30`,
		`fluxgate_log_high_watermark{bucket="0",otel_scope_name="engine",otel_scope_schema_url="",otel_scope_version="",table="fluss.orders"} 30`,
		`fluxgate_log_sync_duration_seconds_count`,
		`fluxgate_log_end_offset{bucket="0",otel_scope_name="engine",otel_scope_schema_url="",otel_scope_version="",table="fluss.orders"} 30`,
		`fluxgate_log_bytes{otel_scope_name="engine",otel_scope_schema_url="",otel_scope_version="",table="fluss.orders"}`,
		`fluxgate_scans_open{otel_scope_name="engine",otel_scope_schema_url="",otel_scope_version=""} 0`,
		`fluxgate_rows_read_total{otel_scope_name="engine",otel_scope_schema_url="",otel_scope_version="",table="fluss.orders"} 30`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", grepFluxgate(string(body)))
	}
}

func grepFluxgate(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "fluxgate_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
