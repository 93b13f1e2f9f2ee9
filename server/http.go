package server

// The HTTP listener (--http): health, metrics and the lake's Iceberg REST
// catalog. Whoever can reach it may connect without credentials (health
// probes have none), so what a connection may hold is bounded: at most
// Config.MaxConnections at once, a time for its request, a time idle
// between requests, and a time a response may stall. With users, /metrics
// (which names every table) asks for credentials.

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"

	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/otel"
)

// httpLimits bound an HTTP connection's time.
type httpLimits struct {
	readHeader time.Duration // to send a request's headers
	read       time.Duration // to send a whole request
	idle       time.Duration // a kept-alive connection between requests
	// writeStall: a response whose client takes nothing for this long is
	// cut off. A response that keeps moving may take as long as it needs
	// (a large table's Iceberg metadata to a slow reader).
	writeStall time.Duration
}

var defaultHTTPLimits = httpLimits{readHeader: 10 * time.Second, read: 30 * time.Second, idle: 60 * time.Second, writeStall: 30 * time.Second}

// DefaultMaxConnections is Config.MaxConnections's default.
const DefaultMaxConnections = 1024

// maxConnections is cfg's connection limit per listener, or its default.
func maxConnections(cfg *Config) int {
	if cfg.MaxConnections <= 0 {
		return DefaultMaxConnections
	}
	return cfg.MaxConnections
}

// limitConnections makes ln accept at most n connections at once; more
// wait to be accepted until one closes.
func limitConnections(ln net.Listener, n int) net.Listener { return netutil.LimitListener(ln, n) }

// newHTTPServer bounds srv, the HTTP listener's server, by limits.
func newHTTPServer(srv *http.Server, limits httpLimits) *http.Server {
	srv.ReadHeaderTimeout = limits.readHeader
	srv.ReadTimeout = limits.read
	srv.IdleTimeout = limits.idle
	// The deadline of a response's first write; each write moves it on.
	srv.WriteTimeout = limits.writeStall
	srv.Handler = movingWrites(srv.Handler, limits.writeStall)
	return srv
}

// movingWrites gives each piece a response writes stall more time, so that
// only a response whose client stops reading runs out of it.
func movingWrites(h http.Handler, stall time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&movingWriter{ResponseWriter: w, rc: http.NewResponseController(w), stall: stall}, r)
	})
}

type movingWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
}

// movingPiece is the most written under one deadline.
const movingPiece = 64 << 10

func (m *movingWriter) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		piece := b[:min(len(b), movingPiece)]
		// Not every writer has a deadline (httptest's has none): then the
		// server's WriteTimeout alone bounds the response.
		_ = m.rc.SetWriteDeadline(time.Now().Add(m.stall))
		w, err := m.ResponseWriter.Write(piece)
		n += w
		if err != nil {
			return n, err
		}
		b = b[w:]
	}
	return n, nil
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (m *movingWriter) Unwrap() http.ResponseWriter { return m.ResponseWriter }

// metricsRoute serves /metrics to admins and principals with "metrics":
// true in the users file (PROTOCOL.md §8): the metrics name every table.
func metricsRoute(authn *auth.Authenticator, metrics http.Handler) otel.Route {
	return otel.Route{Pattern: otel.MetricsPattern, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := authn.Request(r)
		switch {
		case err == nil && p.MayReadMetrics():
			metrics.ServeHTTP(w, r)
		case err == nil:
			http.Error(w, fmt.Sprintf("%s may not read /metrics: that needs \"metrics\": true (or admin) in the users file", p.Name), http.StatusForbidden)
		case auth.Throttled(err):
			auth.SetRetryAfter(w.Header(), err)
			http.Error(w, err.Error(), http.StatusTooManyRequests)
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="fluxgate", Basic realm="fluxgate"`)
			http.Error(w, err.Error(), http.StatusUnauthorized)
		}
	})}
}
