package promscrape

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

const page = `# TYPE fluxgate_log_bytes_read_total counter
fluxgate_log_bytes_read_total{otel_scope_name="engine",table="d.a"} 100
fluxgate_log_bytes_read_total{otel_scope_name="engine",table="d.a",bucket="1"} 20
fluxgate_log_bytes_read_total{otel_scope_name="engine",table="d.b"} 7
# TYPE fluxgate_scans_open gauge
fluxgate_scans_open 3
`

func TestSum(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(page))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"fluxgate_log_bytes_read_total", map[string]string{"table": "d.a"}, 120},
		{"fluxgate_log_bytes_read_total", map[string]string{"table": "d.a", "bucket": "1"}, 20},
		{"fluxgate_log_bytes_read_total", nil, 127},
		{"fluxgate_log_bytes_read_total", map[string]string{"table": "d.c"}, 0},
		{"fluxgate_scans_open", nil, 3},
		{"fluxgate_rows_read_total", nil, 0}, // not on the page yet
	} {
		got, err := Sum(t.Context(), srv.URL+"/metrics", tc.name, tc.labels)
		if err != nil || got != tc.want {
			t.Errorf("Sum(%s, %v) = %v, %v; want %v", tc.name, tc.labels, got, err, tc.want)
		}
	}
	if _, err := Sum(t.Context(), srv.URL+"/nope", "fluxgate_scans_open", nil); err == nil {
		t.Error("Sum of a page answering 404 succeeded")
	}
}
