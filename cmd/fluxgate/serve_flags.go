package main

// fluxgate serve: its flags, optionally filled from a JSON config file, and
// running the server (package server) until a signal.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"

	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/server"
	"github.com/peterbourgon/ff/v4"
)

// serveConfig is serve's flags: the server's Config and how it logs.
type serveConfig struct {
	server.Config
	logLevel  string
	logFormat string
}

func (c *serveConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.Data, "data", server.DefaultData, "data directory")
	fs.StringVar(&c.Listen, "listen", protocol.DefaultFlightAddr, "Flight (gRPC) listen address")
	fs.StringVar(&c.HTTP, "http", server.DefaultHTTP, "HTTP address for /healthz, /readyz, /metrics and the lake's Iceberg REST catalog at /iceberg; HTTPS with --tls-cert (empty: off)")
	fs.IntVar(&c.MaxMessageBytes, "max-message-bytes", protocol.DefaultMaxMessageBytes, "largest gRPC message accepted")
	fs.IntVar(&c.MaxStreamsPerClient, "max-streams-per-client", protocol.DefaultMaxStreamsPerClient, "streaming calls one client host may have open at once (-1: no limit)")
	fs.IntVar(&c.MaxConnections, "max-connections", server.DefaultMaxConnections, "connections the Flight and the HTTP listener each accept at once; more wait to be accepted")
	fs.Int64Var(&c.MaxWriteBytes, "max-write-bytes", protocol.DefaultMaxWriteBytes, "memory budget of clients' streams: written batches received and not yet acknowledged (and their encoding), frames and messages of reads; clients past it wait")
	fs.DurationVar(&c.StreamIdleTimeout, "stream-idle-timeout", protocol.DefaultStreamIdleTimeout, "end a DoPut or DoExchange stream whose client sent nothing, or a DoGet whose client took nothing, for this long (negative: never)")
	fs.IntVar(&c.DefaultBucketNum, "default-bucket-num", catalog.DefaultBucketNum, "bucket.num of tables that do not set it")
	fs.IntVar(&c.MaxPartitions, "max-partitions", catalog.DefaultMaxPartitions, "max.partition.num: the most partitions one partitioned table may have")
	fs.Int64Var(&c.SegmentBytes, "segment-bytes", logstore.DefaultSegmentBytes, "log segment size at which a new segment starts")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&c.InsecureNoAuth, "insecure-no-auth", false, "allow listening on a non-loopback address without authentication")
	fs.StringVar(&c.Users, "users", "", "JSON users file (users with bcrypt passwords, static API tokens, token_secret); turns authentication on")
	fs.DurationVar(&c.TokenTTL, "token-ttl", auth.DefaultTTL, "lifetime of the bearer tokens Handshake returns (at least 1s)")
	fs.StringVar(&c.TLSCert, "tls-cert", "", "PEM certificate (chain) for TLS on the Flight address; with --tls-key")
	fs.StringVar(&c.TLSKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&c.TLSClientCA, "tls-client-ca", "", "PEM CA certificates; clients must present a certificate they signed (mutual TLS)")
	fs.StringVar(&c.OTLPEndpoint, "otlp-endpoint", "", "host:port of an OTLP/gRPC collector to export traces to, e.g. localhost:4317 (empty: no export)")
	fs.BoolVar(&c.OTLPInsecure, "otlp-insecure", false, "export traces to --otlp-endpoint without TLS")
	fs.StringVar(&c.LakeWarehouse, "lake-warehouse", "", "Iceberg warehouse of the lake tier: a directory or an object-store URI iceberg-go supports (empty: <data>/lake)")
	fs.StringVar(&c.LakeCatalog, "lake-catalog", "", "Iceberg catalog of the lake tier as iceberg-go catalog properties, e.g. type=rest,uri=http://localhost:8181 or type=sql,uri=file:/var/lib/lake.db,sql.driver=sqlite,sql.dialect=sqlite (empty: the filesystem catalog in the warehouse)")
	fs.DurationVar(&c.RetentionInterval, "retention-interval", engine.DefaultRetentionInterval, "how often log segments past table.log.ttl are removed")
	fs.DurationVar(&c.AutoPartitionCheckInterval, "auto-partition-check-interval", engine.DefaultAutoPartitionCheckInterval, "how often partitions of tables with table.auto-partition.enabled are created ahead and expired (Fluss's auto-partition.check.interval)")
	fs.IntVar(&c.OpenFiles, "open-files", 0, "file descriptors the data files may keep open at once, however many buckets: half for log segments (the least recently used closed first), a quarter each for the primary-key state and the catalog (0: half of the process's RLIMIT_NOFILE, 256 to 65536)")
	fs.DurationVar(&c.WriterExpiration, "writer-expiration", logstore.DefaultWriterExpiration, "how long an idempotent writer's state is kept after its last batch (Fluss's server.writer-id.expiration-time)")
	fs.DurationVar(&c.FollowHeartbeat, "follow-heartbeat", engine.DefaultFollowHeartbeat, "how long an unbounded scan (a follow) may be idle before it sends an empty batch with its offsets")
}

// serveCommand is fluxgate serve; run runs the server its flags
// configure. Values from --config apply where a flag was not given on the
// command line.
func serveCommand(run func(context.Context, *serveConfig) error) *ff.Command {
	cfg := &serveConfig{}
	fs, configPath := newServeFlagSet(cfg)
	return &ff.Command{Name: "serve", Usage: "fluxgate serve [flags]", ShortHelp: "run the server", Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.UsageError(fmt.Errorf("unexpected argument %q", args[0]))
			}
			if *configPath != "" {
				if err := applyConfigFile(fs.FlagSet, *configPath); err != nil {
					return fmt.Errorf("config %s: %w", *configPath, err)
				}
			}
			return run(ctx, cfg)
		}}
}

// parseServeFlags returns the configuration args give serve.
func parseServeFlags(args []string) (*serveConfig, error) {
	var parsed *serveConfig
	err := serveCommand(func(_ context.Context, cfg *serveConfig) error {
		parsed = cfg
		return nil
	}).ParseAndRun(context.Background(), args)
	return parsed, err
}

// newServeFlagSet returns serve's flags, bound to cfg, and --config.
func newServeFlagSet(cfg *serveConfig) (*cli.FlagSet, *string) {
	fs := cli.NewFlagSet("serve")
	cfg.register(fs.FlagSet)
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
	return cli.Run(ctx, serveCommand(serve), args, os.Stderr)
}

// serve runs the server cfg configures until ctx ends.
func serve(ctx context.Context, cfg *serveConfig) error {
	log, err := newLogger(cfg)
	if err != nil {
		return err
	}
	server.SetMemoryLimit(&cfg.Config, log)
	srv, err := server.Start(ctx, &cfg.Config, log)
	if err != nil {
		return err
	}
	scheme := "grpc://"
	if cfg.TLSCert != "" {
		scheme = "grpc+tls://"
	}
	log.Info("fluxgate serving", "flight", scheme+srv.FlightAddr(), "http", cfg.HTTP, "data", cfg.Data,
		"auth", cfg.Users != "", "mutual_tls", cfg.TLSClientCA != "")
	select {
	case <-ctx.Done():
		log.Info("shutting down: finishing in-flight writes (a second signal exits at once)")
	case err := <-srv.Failed():
		log.Error("server failed", "err", err)
		srv.Stop()
		return err
	}
	return srv.Stop()
}
