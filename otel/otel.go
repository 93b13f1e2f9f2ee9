// Package otel owns the server's OpenTelemetry setup: a meter provider that
// exports to Prometheus, a tracer provider, and the HTTP endpoints an operator
// scrapes and probes (/metrics, /healthz, /readyz). It sets no globals: other
// packages get a Meter or TracerProvider passed in. It owns no business logic.
package otel

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Options configures New. The zero value is valid.
type Options struct {
	// ServiceName is the service.name resource attribute; "fluxgate" if
	// empty. OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override it.
	ServiceName string
	// OTLPEndpoint is the host:port of an OTLP/gRPC collector that spans are
	// exported to, e.g. "localhost:4317"; empty: spans are not exported.
	OTLPEndpoint string
	// OTLPInsecure exports to OTLPEndpoint without TLS.
	OTLPInsecure bool
}

// Telemetry holds the meter and tracer providers of one server.
type Telemetry struct {
	mp      *sdkmetric.MeterProvider
	tp      *sdktrace.TracerProvider
	metrics http.Handler
}

// New sets up metrics, exported on MetricsHandler along with Go runtime and
// process metrics, and tracing, exported by OTLP/gRPC in batches when
// opts.OTLPEndpoint is set.
func New(opts Options) (*Telemetry, error) {
	res, err := resource.New(context.Background(),
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(cmp.Or(opts.ServiceName, "fluxgate"))),
		resource.WithFromEnv(), // last, so the environment wins
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	// A registry of our own, not the global default, so tests and embedded
	// servers do not collide on registration.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if opts.OTLPEndpoint != "" {
		// The exporter connects lazily: New does not fail when the collector
		// is down, and spans are dropped (after retries) while it stays down.
		expOpts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(opts.OTLPEndpoint)}
		if opts.OTLPInsecure {
			expOpts = append(expOpts, otlptracegrpc.WithInsecure())
		}
		spans, err := otlptracegrpc.New(context.Background(), expOpts...)
		if err != nil {
			return nil, fmt.Errorf("otlp trace exporter %s: %w", opts.OTLPEndpoint, err)
		}
		tpOpts = append(tpOpts, sdktrace.WithBatcher(spans))
	}
	return &Telemetry{
		mp:      sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res)),
		tp:      sdktrace.NewTracerProvider(tpOpts...),
		metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
	}, nil
}

// Meter returns the meter of the instrumentation scope name, conventionally
// the importing package's path.
func (t *Telemetry) Meter(name string) metric.Meter { return t.mp.Meter(name) }

// MeterProvider returns the meter provider, for libraries that take one.
func (t *Telemetry) MeterProvider() metric.MeterProvider { return t.mp }

// TracerProvider returns the tracer provider. Spans are sampled and recorded;
// they are exported only with an OTLP endpoint.
func (t *Telemetry) TracerProvider() trace.TracerProvider { return t.tp }

// MetricsHandler serves all metrics in the Prometheus exposition formats.
func (t *Telemetry) MetricsHandler() http.Handler { return t.metrics }

// Shutdown flushes and stops both providers: spans still batched are sent
// to the OTLP endpoint, within ctx's deadline.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	return errors.Join(t.mp.Shutdown(ctx), t.tp.Shutdown(ctx))
}

// MetricsPattern is the pattern /metrics is served under.
const MetricsPattern = "GET /metrics"

// Route is a handler served beside the operators' endpoints, under a
// net/http ServeMux pattern.
type Route struct {
	Pattern string
	Handler http.Handler
}

// NewHTTPServer returns an unstarted server on addr for operators: /healthz
// answers 200 while the process serves HTTP, /readyz 200 when ready reports
// true (always, if ready is nil) and 503 otherwise, and /metrics serves t's
// metrics, unless a route of pattern MetricsPattern serves them (behind
// authentication, say); and routes.
func NewHTTPServer(addr string, t *Telemetry, ready func() bool, routes ...Route) *http.Server {
	mux := http.NewServeMux()
	metrics := false
	for _, r := range routes {
		mux.Handle(r.Pattern, r.Handler)
		metrics = metrics || r.Pattern == MetricsPattern
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ready != nil && !ready() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	})
	if !metrics {
		mux.Handle(MetricsPattern, t.MetricsHandler())
	}
	return &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}
