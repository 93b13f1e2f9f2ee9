package main

// A refused connection surfaces in gRPC as UNAVAILABLE with the dialer's
// error flattened into a string. The client verbs dial through a dialer that
// keeps the last dial error, and interceptors that put it back, as one
// sentence that says what to check.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// reach dials the server and remembers whether the last attempt failed.
type reach struct {
	addr string // as the user gave it

	mu     sync.Mutex
	dialed bool              // a dial was tried: the address resolved
	err    *unreachableError // of the last dial; nil once one succeeds
}

// viaProxy reports whether gRPC would reach addr through an HTTP proxy from
// the environment (HTTPS_PROXY, NO_PROXY), which it does only with its own
// dialer; a reach is not used then.
func viaProxy(addr string) bool {
	if _, hostPort, ok := strings.Cut(addr, "://"); ok {
		addr = hostPort
	}
	proxy, err := http.ProxyFromEnvironment(&http.Request{URL: &url.URL{Scheme: "https", Host: addr}})
	return err != nil || proxy != nil
}

// dialOptions make gRPC connect through r and report through it.
func (r *reach) dialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithContextDialer(r.dial),
		grpc.WithChainUnaryInterceptor(r.unary),
		grpc.WithChainStreamInterceptor(r.stream),
	}
}

func (r *reach) dial(ctx context.Context, addr string) (net.Conn, error) {
	// gRPC passes a custom dialer unix targets with their scheme.
	network, address := "tcp", addr
	if p, ok := strings.CutPrefix(addr, "unix://"); ok {
		network, address = "unix", p
	} else if p, ok := strings.CutPrefix(addr, "unix:"); ok {
		network, address = "unix", p
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, address)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dialed, r.err = true, nil
	if err != nil {
		r.err = &unreachableError{addr: addr, err: err}
	}
	return conn, err
}

func (r *reach) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return r.explain(invoker(ctx, method, req, reply, cc, opts...))
}

func (r *reach) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	return s, r.explain(err)
}

// explain replaces an UNAVAILABLE that a failed dial caused with the dial's
// error, and one before any dial (the address did not resolve) with gRPC's
// words for it; an UNAVAILABLE from a server that was reached passes through.
func (r *reach) explain(err error) error {
	if status.Code(err) != codes.Unavailable {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.dialed {
		return &unreachableError{addr: r.addr, err: errors.New(status.Convert(err).Message())}
	}
	if r.err == nil {
		return err
	}
	return r.err
}

// unreachableError is a failure to connect to the server. It is still
// UNAVAILABLE to status.Code.
type unreachableError struct {
	addr string
	err  error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach fluxgate at %s (%s): is the server running? set --addr or FLUXGATE_ADDR", e.addr, dialCause(e.err))
}

func (e *unreachableError) Unwrap() error { return e.err }

func (e *unreachableError) GRPCStatus() *status.Status {
	return status.New(codes.Unavailable, e.Error())
}

// dialCause is the innermost words of a dial error: "connection refused",
// "lookup nohost: no such host".
func dialCause(err error) string {
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}
