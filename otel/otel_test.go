package otel

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync/atomic"
	"testing"
)

func newServer(t *testing.T, ready func() bool) (*Telemetry, *httptest.Server) {
	t.Helper()
	tel, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	srv := httptest.NewServer(NewHTTPServer("", tel, ready).Handler)
	t.Cleanup(srv.Close)
	return tel, srv
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestMetrics(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "") // empty is unset: keep the default name
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	tel, srv := newServer(t, nil)
	c, err := tel.Meter("fluxgate/test").Int64Counter("fluxgate.test.appends")
	if err != nil {
		t.Fatal(err)
	}
	c.Add(context.Background(), 3)
	code, body := get(t, srv.URL+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, re := range []string{
		`(?m)^fluxgate_test_appends_total\{[^}]*otel_scope_name="fluxgate/test"[^}]*\} 3$`,
		`(?m)^go_goroutines \d+$`,
		`(?m)^target_info\{[^}]*service_name="fluxgate"`,
	} {
		if !regexp.MustCompile(re).MatchString(body) {
			t.Errorf("/metrics has no match for %s:\n%s", re, body)
		}
	}
}

func TestTracer(t *testing.T) {
	tel, _ := newServer(t, nil)
	_, span := tel.TracerProvider().Tracer("fluxgate/test").Start(context.Background(), "op")
	defer span.End()
	if !span.SpanContext().IsValid() || !span.IsRecording() {
		t.Error("span is not a recording SDK span")
	}
}

func TestHealthAndReady(t *testing.T) {
	var ready atomic.Bool
	_, srv := newServer(t, ready.Load)
	if code, body := get(t, srv.URL+"/healthz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, _ := get(t, srv.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before ready = %d, want 503", code)
	}
	ready.Store(true)
	if code, body := get(t, srv.URL+"/readyz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/readyz when ready = %d %q", code, body)
	}
}
