package main

// Shared plumbing of the client verbs (table, put, scan): the connection
// flags, flag parsing that allows flags after positional arguments, and the
// one way an RPC error is printed.

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/fluxgate-io/fluxgate/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// stdio is where a client verb reads and writes; tests replace it.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
	// errTerminal reports whether err is a terminal (for progress lines).
	errTerminal bool
}

func osStdio() stdio {
	return stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr, errTerminal: isTerminal(os.Stderr)}
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// connFlags are the flags every client verb has.
type connFlags struct {
	addr     string
	user     string
	password string
	token    string
	tlsCA    string
}

func (c *connFlags) register(fs *flag.FlagSet) {
	addr := os.Getenv("FLUXGATE_ADDR")
	if addr == "" {
		addr = client.DefaultAddr
	}
	fs.StringVar(&c.addr, "addr", addr, "server address: host:port, grpc://host:port or grpc+tls://host:port (env FLUXGATE_ADDR)")
	fs.StringVar(&c.user, "user", os.Getenv("FLUXGATE_USER"), "user for basic authentication (env FLUXGATE_USER)")
	fs.StringVar(&c.password, "password", "", "password for basic authentication (default: env FLUXGATE_PASSWORD)")
	fs.StringVar(&c.token, "token", "", "static API token, sent as a bearer token (default: env FLUXGATE_TOKEN)")
	fs.StringVar(&c.tlsCA, "tls-ca", os.Getenv("FLUXGATE_TLS_CA"), "PEM CA certificates to verify a grpc+tls:// server with, instead of the system roots (env FLUXGATE_TLS_CA)")
}

// dialTable connects and describes table: the client, the table and its
// Arrow schema, which the verbs that send rows (put, lookup) build input from.
// The caller closes the client.
func (c *connFlags) dialTable(ctx context.Context, table string) (*client.Client, *client.TableInfo, *arrow.Schema, error) {
	cl, err := c.dial(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	info, err := cl.DescribeTable(ctx, table)
	if err != nil {
		cl.Close()
		return nil, nil, nil, err
	}
	schema, err := info.ArrowSchema()
	if err != nil {
		cl.Close()
		return nil, nil, nil, fmt.Errorf("table %s: %w", table, err)
	}
	return cl, info, schema, nil
}

func (c *connFlags) dial(ctx context.Context) (*client.Client, error) {
	var opts []client.Option
	if !viaProxy(c.addr) {
		opts = append(opts, client.WithDialOptions((&reach{addr: c.addr}).dialOptions()...))
	}
	if c.user != "" {
		pass := c.password
		if pass == "" {
			pass = os.Getenv("FLUXGATE_PASSWORD")
		}
		opts = append(opts, client.WithBasicAuth(c.user, pass))
	}
	if tok := cmp.Or(c.token, os.Getenv("FLUXGATE_TOKEN")); tok != "" {
		opts = append(opts, client.WithBearerToken(tok))
	}
	if c.tlsCA != "" {
		pem, err := os.ReadFile(c.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificates", c.tlsCA)
		}
		opts = append(opts, client.WithTLS(&tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}))
	}
	return client.Dial(ctx, c.addr, opts...)
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// cliError turns an error that carries a gRPC status into "<CODE>: <message>"
// with the server's own message; main prefixes it with "fluxgate <verb>: ".
// Other errors, and a server not reached (which says so itself), pass through.
func cliError(err error) error {
	var unreachable *unreachableError
	if err == nil || errors.Is(err, flag.ErrHelp) || errors.As(err, &unreachable) {
		return err
	}
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) {
		return err
	}
	st := se.GRPCStatus()
	if st == nil {
		return err
	}
	return &rpcError{code: st.Code(), msg: st.Message(), err: err}
}

// rpcError is an RPC failure as the CLI prints it; status.Code still works on it.
type rpcError struct {
	code codes.Code
	msg  string
	err  error
}

func (e *rpcError) Error() string { return codeName(e.code) + ": " + e.msg }
func (e *rpcError) Unwrap() error { return e.err }

// codeName is the canonical name of a gRPC code, as PROTOCOL.md writes it.
func codeName(c codes.Code) string {
	names := map[codes.Code]string{
		codes.OK:                 "OK",
		codes.Canceled:           "CANCELLED",
		codes.Unknown:            "UNKNOWN",
		codes.InvalidArgument:    "INVALID_ARGUMENT",
		codes.DeadlineExceeded:   "DEADLINE_EXCEEDED",
		codes.NotFound:           "NOT_FOUND",
		codes.AlreadyExists:      "ALREADY_EXISTS",
		codes.PermissionDenied:   "PERMISSION_DENIED",
		codes.ResourceExhausted:  "RESOURCE_EXHAUSTED",
		codes.FailedPrecondition: "FAILED_PRECONDITION",
		codes.Aborted:            "ABORTED",
		codes.OutOfRange:         "OUT_OF_RANGE",
		codes.Unimplemented:      "UNIMPLEMENTED",
		codes.Internal:           "INTERNAL",
		codes.Unavailable:        "UNAVAILABLE",
		codes.DataLoss:           "DATA_LOSS",
		codes.Unauthenticated:    "UNAUTHENTICATED",
	}
	if n, ok := names[c]; ok {
		return n
	}
	return c.String()
}
