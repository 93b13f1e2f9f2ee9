// Package server assembles a fluxgate server from a Config: the engine on
// the data directory, the Flight service with its limits, authentication,
// grants and TLS, telemetry, and the HTTP side (health, metrics, the lake's
// Iceberg REST catalog). cmd/fluxgate serve fills the Config from flags;
// bench and demo start one in process.
//
// It owns no protocol and no storage: flight, engine and the rest do.
package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/engine"
	fgflight "github.com/fluxgate-io/fluxgate/flight"
	"github.com/fluxgate-io/fluxgate/icebergrest"
	"github.com/fluxgate-io/fluxgate/otel"
)

// Config is a server's configuration. cmd/fluxgate fills it from serve's
// flags (their help says what each field does); bench and demo set the few
// fields an embedded server on loopback needs. Zero numbers and durations
// are the defaults of what they configure (flight.Limits, engine.Options,
// auth.Options); an empty string turns its feature off (the HTTP side,
// users, TLS, trace export) or means the default (the lake's warehouse and
// catalog).
type Config struct {
	Data                string        // the data directory
	Listen              string        // Flight (gRPC) address
	HTTP                string        // /healthz, /readyz, /metrics and /iceberg; empty: off
	MaxMessageBytes     int           // largest gRPC message accepted
	MaxStreamsPerClient int           // streaming calls one client host may have open
	MaxConnections      int           // connections each listener accepts at once; 0: DefaultMaxConnections
	MaxWriteBytes       int64         // the memory budget of clients' streams (flight.Limits.MaxWriteBytes)
	StreamIdleTimeout   time.Duration // end a stream whose client sent or took nothing this long
	DefaultBucketNum    int           // bucket.num of tables that do not set it
	MaxPartitions       int           // max.partition.num: most partitions of one table; 0: 1000
	SegmentBytes        int64         // log segment size
	InsecureNoAuth      bool          // allow a non-loopback address without users
	Users               string        // the users file; turns authentication on
	TokenTTL            time.Duration // lifetime of bearer tokens
	TLSCert             string        // PEM certificate of the Flight address
	TLSKey              string        // PEM private key of TLSCert
	TLSClientCA         string        // PEM CAs of client certificates (mutual TLS)
	OTLPEndpoint        string        // OTLP/gRPC collector of traces
	OTLPInsecure        bool          // export traces without TLS
	LakeWarehouse       string        // Iceberg warehouse; empty: <Data>/lake
	LakeCatalog         string        // iceberg-go catalog properties, key=value,...
	RetentionInterval   time.Duration // how often expired log segments are removed
	WriterExpiration    time.Duration // how long an idle idempotent writer is kept
	FollowHeartbeat     time.Duration // how long a follow is idle before an empty batch
	OpenFiles           int           // descriptors the data files may keep open; 0: half of RLIMIT_NOFILE

	AutoPartitionCheckInterval time.Duration // how often auto partitions are made and expired

	// Now is the clock of bearer tokens and of automatic partitions; nil
	// means time.Now. No flag sets it: tests do, to expire tokens and
	// partitions without waiting.
	Now func() time.Time
}

// The defaults of the fluxgate serve flags of the same names that Config
// has no zero value for; the others are the defaults of the packages their
// fields configure, and protocol's (the listen address, the limits).
const (
	DefaultData = "./fluxgate-data"
	DefaultHTTP = "127.0.0.1:8816"
)

// Server is a running fluxgate: engine, Flight service and HTTP side.
type Server struct {
	eng    *engine.Engine
	grpc   flight.Server
	http   *http.Server
	httpLn net.Listener
	tel    *otel.Telemetry
	log    *slog.Logger
	failed chan error
}

// Start starts a server; ctx bounds the start (opening the lake's
// catalog), not the server's life, which ends with Stop.
func Start(ctx context.Context, cfg *Config, log *slog.Logger) (*Server, error) {
	authn, err := newAuthenticator(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := checkListen(cfg.Listen, authn != nil, cfg.InsecureNoAuth, log); err != nil {
		return nil, err
	}
	limits := fgflight.Limits{MaxStreamsPerClient: cfg.MaxStreamsPerClient, MaxWriteBytes: cfg.MaxWriteBytes,
		MaxMessageBytes: cfg.MaxMessageBytes, StreamIdleTimeout: cfg.StreamIdleTimeout}
	grpcOpts := []grpc.ServerOption{grpc.MaxSendMsgSize(cfg.MaxMessageBytes)}
	tlsCfg, err := serverTLS(cfg)
	if err != nil {
		return nil, err
	}
	if tlsCfg != nil {
		grpcOpts = append(grpcOpts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	// The message limit, the transport's windows and buffers, the codec and
	// the panic recovery of the service.
	grpcOpts = append(grpcOpts, fgflight.ServerOptions(fgflight.Options{Logger: log, Limits: limits})...)
	var middleware []flight.ServerMiddleware
	if authn != nil {
		// Handshake takes basic credentials and returns a bearer token; every
		// other call needs the token. The Principal is in flight.AuthFromContext.
		// Failed handshakes are throttled per client address.
		middleware = append(middleware, authn.Middleware()...)
	}
	tel, err := otel.New(otel.Options{ServiceName: "fluxgate", OTLPEndpoint: cfg.OTLPEndpoint, OTLPInsecure: cfg.OTLPInsecure})
	if err != nil {
		return nil, err
	}
	// A span per RPC (with the table as fluxgate.table, see flight/trace.go)
	// and the rpc.server.* metrics, e.g. rpc_server_call_duration_seconds.
	grpcOpts = append(grpcOpts, grpc.StatsHandler(otelgrpc.NewServerHandler(
		otelgrpc.WithMeterProvider(tel.MeterProvider()),
		otelgrpc.WithTracerProvider(tel.TracerProvider()))))
	lakeCatalog, err := parseProperties(cfg.LakeCatalog)
	if err != nil {
		return nil, fmt.Errorf("--lake-catalog: %w", err)
	}
	eng, err := openEngine(ctx, cfg.Data, engine.Options{
		DefaultBucketNum:  cfg.DefaultBucketNum,
		MaxPartitions:     cfg.MaxPartitions,
		Logger:            log,
		Meter:             tel.Meter("github.com/fluxgate-io/fluxgate/engine"),
		Lake:              engine.LakeOptions{Warehouse: cfg.LakeWarehouse, Catalog: lakeCatalog},
		RetentionInterval: cfg.RetentionInterval,
		FollowHeartbeat:   cfg.FollowHeartbeat,
		OpenFiles:         cfg.OpenFiles,
		AutoPartition:     engine.AutoPartitionOptions{CheckInterval: cfg.AutoPartitionCheckInterval, Now: cfg.Now},
	}.WithLogSegmentBytes(cfg.SegmentBytes).WithWriterExpiration(cfg.WriterExpiration))
	if err != nil {
		return nil, err
	}
	// Permissions apply with users only: without them every caller may do
	// everything (PROTOCOL.md §8).
	var grants *acl.Store
	if authn != nil {
		if grants, err = acl.Open(filepath.Join(cfg.Data, "acl.json")); err != nil {
			eng.Close()
			return nil, err
		}
	}
	s := &Server{eng: eng, tel: tel, log: log, failed: make(chan error, 2)}
	s.grpc = flight.NewServerWithMiddleware(middleware, grpcOpts...)
	s.grpc.RegisterFlightService(fgflight.New(eng, fgflight.Options{
		Logger: log,
		Limits: limits,
		ACL:    grants,
	}))
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		eng.Close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	s.grpc.InitListener(limitConnections(ln, maxConnections(cfg)))
	go func() {
		if err := s.grpc.Serve(); err != nil {
			s.failed <- err
		}
	}()
	if cfg.HTTP != "" {
		routes := lakeCatalogRoutes(cfg, eng, authn, grants, log)
		if authn != nil {
			routes = append(routes, metricsRoute(authn, tel.MetricsHandler()))
		}
		s.http = newHTTPServer(otel.NewHTTPServer(cfg.HTTP, tel, eng.Ready, routes...), defaultHTTPLimits)
		ln, err := net.Listen("tcp", cfg.HTTP)
		if err != nil {
			s.Stop()
			return nil, fmt.Errorf("listen on %s: %w", cfg.HTTP, err)
		}
		ln = limitConnections(ln, maxConnections(cfg))
		s.httpLn = ln
		if tlsCfg != nil {
			ln = tls.NewListener(ln, httpTLS(tlsCfg))
		}
		go func() {
			if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.failed <- err
			}
		}()
	}
	return s, nil
}

// lakeCatalogRoutes serves the lake's Iceberg REST catalog with the users and
// grants of Flight; like Flight, not to anyone on the network without users
// (PROTOCOL.md §8): then only on a loopback --http (or --insecure-no-auth).
func lakeCatalogRoutes(cfg *Config, eng *engine.Engine, authn *auth.Authenticator, grants *acl.Store, log *slog.Logger) []otel.Route {
	if checkListen(cfg.HTTP, authn != nil, cfg.InsecureNoAuth, log) != nil {
		log.Info("the lake's Iceberg REST catalog is not served: --http is not a loopback address and no users are configured", "http", cfg.HTTP)
		return nil
	}
	h := icebergrest.Handler(eng, icebergrest.Options{Auth: authn, ACL: grants, Logger: log})
	return []otel.Route{{Pattern: icebergrest.Prefix + "/", Handler: h}}
}

// httpTLS is Flight's TLS for the HTTP listener, which carries the lake
// catalog's tokens and passwords, without asking for client certificates:
// health probes and metrics scrapers have none, and the catalog
// authenticates its callers by token or password.
func httpTLS(flight *tls.Config) *tls.Config {
	tc := flight.Clone()
	tc.ClientAuth, tc.ClientCAs = tls.NoClientCert, nil
	return tc
}

// FlightAddr is the address the Flight service listens on.
func (s *Server) FlightAddr() string { return s.grpc.Addr().String() }

// HTTPAddr is the address the HTTP listener listens on ("" without one).
func (s *Server) HTTPAddr() string {
	if s.httpLn == nil {
		return ""
	}
	return s.httpLn.Addr().String()
}

// Failed delivers the error of a listener that stopped serving.
func (s *Server) Failed() <-chan error { return s.failed }

// Engine is the server's engine, for callers in this process (bench reads
// its counters).
func (s *Server) Engine() *engine.Engine { return s.eng }

// Telemetry is the server's meters and tracers (tests read its metrics).
func (s *Server) Telemetry() *otel.Telemetry { return s.tel }

// Stop ends followers, lets in-flight RPCs (writes) finish for up to 30
// seconds, then makes everything durable and closes the data directory.
func (s *Server) Stop() error {
	s.eng.Drain()
	done := make(chan struct{})
	go func() {
		s.grpc.Shutdown()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.log.Warn("in-flight RPCs did not finish in 30s; closing them")
	}
	var err error
	if s.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = s.http.Shutdown(ctx)
		cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = errors.Join(err, s.eng.Close(), s.tel.Shutdown(ctx))
	if err == nil {
		s.log.Info("fluxgate stopped")
	}
	return err
}

// newAuthenticator loads --users; nil without it.
func newAuthenticator(cfg *Config, log *slog.Logger) (*auth.Authenticator, error) {
	if cfg.Users == "" {
		return nil, nil
	}
	users, err := auth.LoadUsers(cfg.Users)
	if err != nil {
		return nil, err
	}
	a, err := auth.New(users, auth.Options{TTL: cfg.TokenTTL, Now: cfg.Now})
	if err != nil {
		return nil, fmt.Errorf("--token-ttl: %w", err)
	}
	if !users.HasSecret() {
		log.Warn("no token_secret in the users file: tokens are signed with a random secret, so they end with a restart and other replicas refuse them", "users", cfg.Users)
	}
	return a, nil
}

// openEngine opens the data directory. A disk that fails while it opens
// (such as a full one, where pebble cannot flush the catalog's recovered log)
// is an error in one line: serve prints it and exits 1.
func openEngine(ctx context.Context, dir string, opts engine.Options) (*engine.Engine, error) {
	eng, err := engine.Open(ctx, dir, opts)
	if err != nil {
		return nil, fmt.Errorf("open data directory %s: %w", dir, err)
	}
	return eng, nil
}

// serverTLS is the TLS configuration of the Flight address; nil without
// --tls-cert.
func serverTLS(cfg *Config) (*tls.Config, error) {
	if cfg.TLSCert == "" && cfg.TLSKey == "" {
		if cfg.TLSClientCA != "" {
			return nil, errors.New("--tls-client-ca needs --tls-cert and --tls-key")
		}
		return nil, nil
	}
	if cfg.TLSCert == "" || cfg.TLSKey == "" {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if cfg.TLSClientCA != "" {
		pem, err := os.ReadFile(cfg.TLSClientCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-client-ca %s: no PEM certificates", cfg.TLSClientCA)
		}
		tc.ClientCAs = pool
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// checkListen enforces PROTOCOL.md §8: without authentication the server
// listens on loopback only, unless insecure (--insecure-no-auth), which logs a
// warning.
func checkListen(addr string, authOn, insecure bool, log *slog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", addr, err)
	}
	if authOn {
		return nil
	}
	if host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if insecure {
		log.Warn("listening on a non-loopback address without authentication (--insecure-no-auth): anyone who can reach it can read and write", "listen", addr)
		return nil
	}
	return fmt.Errorf("--listen %s is not a loopback address and no users are configured (--users): anyone could read and write; pass --insecure-no-auth to do it anyway", addr)
}

// parseProperties parses key=value pairs separated by commas.
func parseProperties(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	props := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%q is not key=value", kv)
		}
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if props["type"] == "" {
		return nil, fmt.Errorf("name the catalog's type (type=rest, type=sql, ...)")
	}
	return props, nil
}
