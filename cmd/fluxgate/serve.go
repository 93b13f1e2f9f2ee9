package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/otel"
)

// serveConfig is the server's configuration: flags, optionally filled from a
// JSON config file whose keys are the flag names.
type serveConfig struct {
	data            string
	listen          string
	http            string
	maxMessageBytes int
	maxStreams      int
	maxWriteBytes   int64
	idleTimeout     time.Duration
	bucketNum       int
	segmentBytes    int64
	logLevel        string
	logFormat       string
	insecureNoAuth  bool
	users           string
	tokenTTL        time.Duration
	tlsCert         string
	tlsKey          string
	tlsClientCA     string
	otlpEndpoint    string
	otlpInsecure    bool
	lakeWarehouse   string
	lakeCatalog     string
	retention       time.Duration
	writerExpiry    time.Duration
	// now is the clock of bearer tokens; nil means time.Now. No flag sets
	// it: tests do, to expire tokens without waiting.
	now func() time.Time
}

func (c *serveConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.data, "data", "./fluxgate-data", "data directory")
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8815", "Flight (gRPC) listen address")
	fs.StringVar(&c.http, "http", "127.0.0.1:8816", "HTTP address for /healthz, /readyz, /metrics and the lake's Iceberg REST catalog at /iceberg; HTTPS with --tls-cert (empty: off)")
	fs.IntVar(&c.maxMessageBytes, "max-message-bytes", 64<<20, "largest gRPC message accepted")
	fs.IntVar(&c.maxStreams, "max-streams-per-client", 256, "streaming calls one client host may have open at once (-1: no limit)")
	fs.Int64Var(&c.maxWriteBytes, "max-write-bytes", 1<<30, "bytes of written batches held before they are acknowledged, over all writers; writers past it wait")
	fs.DurationVar(&c.idleTimeout, "stream-idle-timeout", 10*time.Minute, "end a DoPut or DoExchange stream whose client sent nothing for this long (negative: never)")
	fs.IntVar(&c.bucketNum, "default-bucket-num", 1, "bucket.num of tables that do not set it")
	fs.Int64Var(&c.segmentBytes, "segment-bytes", 256<<20, "log segment size at which a new segment starts")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&c.insecureNoAuth, "insecure-no-auth", false, "allow listening on a non-loopback address without authentication")
	fs.StringVar(&c.users, "users", "", "JSON users file (users with bcrypt passwords, static API tokens, token_secret); turns authentication on")
	fs.DurationVar(&c.tokenTTL, "token-ttl", auth.DefaultTTL, "lifetime of the bearer tokens Handshake returns (at least 1s)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM certificate (chain) for TLS on the Flight address; with --tls-key")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&c.tlsClientCA, "tls-client-ca", "", "PEM CA certificates; clients must present a certificate they signed (mutual TLS)")
	fs.StringVar(&c.otlpEndpoint, "otlp-endpoint", "", "host:port of an OTLP/gRPC collector to export traces to, e.g. localhost:4317 (empty: no export)")
	fs.BoolVar(&c.otlpInsecure, "otlp-insecure", false, "export traces to --otlp-endpoint without TLS")
	fs.StringVar(&c.lakeWarehouse, "lake-warehouse", "", "Iceberg warehouse of the lake tier: a directory or an object-store URI iceberg-go supports (empty: <data>/lake)")
	fs.StringVar(&c.lakeCatalog, "lake-catalog", "", "Iceberg catalog of the lake tier as iceberg-go catalog properties, e.g. type=rest,uri=http://localhost:8181 or type=sql,uri=file:/var/lib/lake.db,sql.driver=sqlite,sql.dialect=sqlite (empty: the filesystem catalog in the warehouse)")
	fs.DurationVar(&c.retention, "retention-interval", time.Minute, "how often log segments past table.log.ttl are removed")
	fs.DurationVar(&c.writerExpiry, "writer-expiration", logstore.DefaultWriterExpiration, "how long an idempotent writer's state is kept after its last batch (Fluss's server.writer-id.expiration-time)")
}

// parseServeFlags parses args; values from --config apply where a flag was
// not given on the command line.
func parseServeFlags(args []string) (*serveConfig, error) {
	cfg := &serveConfig{}
	fs, configPath := newServeFlagSet(cfg)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *configPath == "" {
		return cfg, nil
	}
	if err := applyConfigFile(fs, *configPath); err != nil {
		return nil, fmt.Errorf("config %s: %w", *configPath, err)
	}
	return cfg, nil
}

// newServeFlagSet returns serve's flags, bound to cfg, and --config.
func newServeFlagSet(cfg *serveConfig) (*flag.FlagSet, *string) {
	fs := newFlagSet("serve", "serve [flags]")
	cfg.register(fs)
	configPath := fs.String("config", "", "JSON config file; keys are the flag names, e.g. {\"data\": \"/var/lib/fluxgate\"}")
	return fs, configPath
}

// applyConfigFile sets the flags that the JSON object in path names and the
// command line did not. Numbers are taken as written, so 1000000 stays
// 1000000 rather than becoming the float 1e+06 that an int flag refuses.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var values map[string]any
	if err := dec.Decode(&values); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, key := range slices.Sorted(maps.Keys(values)) {
		if key == "config" || fs.Lookup(key) == nil {
			return fmt.Errorf("unknown key %q: the keys are the flag names of fluxgate serve -h", key)
		}
		if given[key] {
			continue
		}
		var text string
		switch v := values[key].(type) {
		case string:
			text = v
		case json.Number:
			text = v.String()
		case bool:
			text = strconv.FormatBool(v)
		default:
			return fmt.Errorf("%s: want a string, number or boolean, not %s", key, jsonKind(v))
		}
		if err := fs.Set(key, text); err != nil {
			return fmt.Errorf("%s: invalid value %q: %w", key, text, err)
		}
	}
	return nil
}

// jsonKind names the JSON kind of a decoded value that is not a scalar.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	}
	return "an object"
}

func newLogger(cfg *serveConfig) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch cfg.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", cfg.logFormat)
}

func runServe(ctx context.Context, args []string) error {
	cfg, err := parseServeFlags(args)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg)
	if err != nil {
		return err
	}
	srv, err := startServer(ctx, cfg, log)
	if err != nil {
		return err
	}
	scheme := "grpc://"
	if cfg.tlsCert != "" {
		scheme = "grpc+tls://"
	}
	log.Info("fluxgate serving", "flight", scheme+srv.FlightAddr(), "http", cfg.http, "data", cfg.data,
		"auth", cfg.users != "", "mutual_tls", cfg.tlsClientCA != "")
	select {
	case <-ctx.Done():
		log.Info("shutting down: finishing in-flight writes (a second signal exits at once)")
	case err := <-srv.failed:
		log.Error("server failed", "err", err)
		srv.Stop()
		return err
	}
	return srv.Stop()
}

// server is a running fluxgate: engine, Flight service and HTTP side.
type server struct {
	eng    *engine.Engine
	grpc   flight.Server
	http   *http.Server
	tel    *otel.Telemetry
	log    *slog.Logger
	failed chan error
}

// startServer starts a server; ctx bounds the start (opening the lake's
// catalog), not the server's life, which ends with Stop.
func startServer(ctx context.Context, cfg *serveConfig, log *slog.Logger) (*server, error) {
	authn, err := newAuthenticator(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := checkListen(cfg.listen, authn != nil, cfg.insecureNoAuth, log); err != nil {
		return nil, err
	}
	limits := fgflight.Limits{StreamsPerClient: cfg.maxStreams, WriteBytes: cfg.maxWriteBytes,
		MessageBytes: cfg.maxMessageBytes, IdleTimeout: cfg.idleTimeout}
	grpcOpts := []grpc.ServerOption{
		grpc.MaxSendMsgSize(cfg.maxMessageBytes),
		// Larger HTTP/2 windows and buffers: about +10 % on bulk transfers.
		grpc.InitialWindowSize(16 << 20),
		grpc.InitialConnWindowSize(16 << 20),
		grpc.ReadBufferSize(1 << 20),
		grpc.WriteBufferSize(1 << 20),
	}
	tlsCfg, err := serverTLS(cfg)
	if err != nil {
		return nil, err
	}
	if tlsCfg != nil {
		grpcOpts = append(grpcOpts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	// The message limit, the codec and the panic recovery of the service.
	grpcOpts = append(grpcOpts, fgflight.ServerOptions(fgflight.Options{Logger: log, Limits: limits})...)
	var middleware []flight.ServerMiddleware
	if authn != nil {
		// Handshake takes basic credentials and returns a bearer token; every
		// other call needs the token. The Principal is in flight.AuthFromContext.
		// Failed handshakes are throttled per client address.
		middleware = append(middleware, authn.Middleware()...)
	}
	tel, err := otel.New(otel.Options{ServiceName: "fluxgate", OTLPEndpoint: cfg.otlpEndpoint, OTLPInsecure: cfg.otlpInsecure})
	if err != nil {
		return nil, err
	}
	// A span per RPC (with the table as fluxgate.table, see flight/trace.go)
	// and the rpc.server.* metrics, e.g. rpc_server_call_duration_seconds.
	grpcOpts = append(grpcOpts, grpc.StatsHandler(otelgrpc.NewServerHandler(
		otelgrpc.WithMeterProvider(tel.MeterProvider()),
		otelgrpc.WithTracerProvider(tel.TracerProvider()))))
	lakeCatalog, err := parseProperties(cfg.lakeCatalog)
	if err != nil {
		return nil, fmt.Errorf("--lake-catalog: %w", err)
	}
	eng, err := openEngine(ctx, cfg.data, engine.Options{
		DefaultBucketNum:  cfg.bucketNum,
		Logger:            log,
		Meter:             tel.Meter("github.com/fluxgate-io/fluxgate/engine"),
		Lake:              engine.LakeOptions{Warehouse: cfg.lakeWarehouse, Catalog: lakeCatalog},
		RetentionInterval: cfg.retention,
	}.WithLogSegmentBytes(cfg.segmentBytes).WithWriterExpiration(cfg.writerExpiry))
	if err != nil {
		return nil, err
	}
	// Permissions apply with users only: without them every caller may do
	// everything (PROTOCOL.md §8).
	var grants *acl.Store
	if authn != nil {
		if grants, err = acl.Open(filepath.Join(cfg.data, "acl.json")); err != nil {
			eng.Close()
			return nil, err
		}
	}
	s := &server{eng: eng, tel: tel, log: log, failed: make(chan error, 2)}
	s.grpc = flight.NewServerWithMiddleware(middleware, grpcOpts...)
	s.grpc.RegisterFlightService(fgflight.New(eng, fgflight.Options{
		Logger: log,
		Limits: limits,
		ACL:    grants,
	}))
	if err := s.grpc.Init(cfg.listen); err != nil {
		eng.Close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.listen, err)
	}
	go func() {
		if err := s.grpc.Serve(); err != nil {
			s.failed <- err
		}
	}()
	if cfg.http != "" {
		s.http = otel.NewHTTPServer(cfg.http, tel, eng.Ready, lakeCatalogRoutes(cfg, eng, authn, grants, log)...)
		ln, err := net.Listen("tcp", cfg.http)
		if err != nil {
			s.Stop()
			return nil, fmt.Errorf("listen on %s: %w", cfg.http, err)
		}
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
func lakeCatalogRoutes(cfg *serveConfig, eng *engine.Engine, authn *auth.Authenticator, grants *acl.Store, log *slog.Logger) []otel.Route {
	if checkListen(cfg.http, authn != nil, cfg.insecureNoAuth, log) != nil {
		log.Info("the lake's Iceberg REST catalog is not served: --http is not a loopback address and no users are configured", "http", cfg.http)
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
func (s *server) FlightAddr() string { return s.grpc.Addr().String() }

// Stop ends followers, lets in-flight RPCs (writes) finish for up to 30
// seconds, then makes everything durable and closes the data directory.
func (s *server) Stop() error {
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
func newAuthenticator(cfg *serveConfig, log *slog.Logger) (*auth.Authenticator, error) {
	if cfg.users == "" {
		return nil, nil
	}
	users, err := auth.LoadUsers(cfg.users)
	if err != nil {
		return nil, err
	}
	a, err := auth.New(users, auth.Options{TTL: cfg.tokenTTL, Now: cfg.now})
	if err != nil {
		return nil, fmt.Errorf("--token-ttl: %w", err)
	}
	if !users.HasSecret() {
		log.Warn("no token_secret in the users file: tokens are signed with a random secret, so they end with a restart and other replicas refuse them", "users", cfg.users)
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
func serverTLS(cfg *serveConfig) (*tls.Config, error) {
	if cfg.tlsCert == "" && cfg.tlsKey == "" {
		if cfg.tlsClientCA != "" {
			return nil, errors.New("--tls-client-ca needs --tls-cert and --tls-key")
		}
		return nil, nil
	}
	if cfg.tlsCert == "" || cfg.tlsKey == "" {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	cert, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if cfg.tlsClientCA != "" {
		pem, err := os.ReadFile(cfg.tlsClientCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-client-ca %s: no PEM certificates", cfg.tlsClientCA)
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
