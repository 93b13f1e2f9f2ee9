package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/fluxgate-io/fluxgate/internal/flightcodec"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// DefaultAddr is the server's default Flight address.
const DefaultAddr = protocol.DefaultFlightAddr

// MaxMessageBytes is the gRPC message size limit the client sets in both
// directions, the server's default --max-message-bytes.
const MaxMessageBytes = protocol.DefaultMaxMessageBytes

// Client is a connection to a fluxgate server. It is safe for concurrent use.
type Client struct {
	fc   flight.Client
	mem  memory.Allocator
	addr string
	// token is the "Bearer ..." value from the basic-auth handshake, added to
	// every call by the interceptors; nil without authentication.
	token atomic.Pointer[string]
}

// Option configures Dial.
type Option func(*options)

type options struct {
	mem       memory.Allocator
	tls       *tls.Config
	user      string
	pass      string
	basicAuth bool
	bearer    string
	dialOpts  []grpc.DialOption
}

// WithAllocator sets the allocator for the record batches the client reads
// and the buffers it writes. The default is memory.DefaultAllocator.
func WithAllocator(mem memory.Allocator) Option { return func(o *options) { o.mem = mem } }

// WithTLS connects with TLS using cfg (a grpc+tls:// address without this
// option uses the system roots).
func WithTLS(cfg *tls.Config) Option { return func(o *options) { o.tls = cfg } }

// WithBasicAuth authenticates in Dial with the Flight basic-to-bearer
// handshake; every later call carries the bearer token.
func WithBasicAuth(user, pass string) Option {
	return func(o *options) { o.user, o.pass, o.basicAuth = user, pass, true }
}

// WithBearerToken sends "authorization: Bearer <token>" on every call, for a
// static API token (or a token obtained elsewhere) instead of a handshake.
// WithBasicAuth, if also given, wins.
func WithBearerToken(token string) Option { return func(o *options) { o.bearer = token } }

// WithDialOptions adds gRPC dial options, applied after the client's own (so
// they can override the message size limits, say).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dialOpts = append(o.dialOpts, opts...) }
}

// Dial connects to the server at addr: "host:port", "grpc://host:port",
// "grpc+tcp://host:port" or "grpc+tls://host:port", the forms FLUXGATE_ADDR
// takes in the CLI and the Python package; "" is DefaultAddr. A bare
// host:port speaks TLS with WithTLS; a grpc:// address with it is an error,
// since the two disagree. The connection itself is made lazily by gRPC,
// except with WithBasicAuth, whose handshake Dial runs.
func Dial(ctx context.Context, addr string, opts ...Option) (*Client, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.mem == nil {
		o.mem = memory.DefaultAllocator
	}
	target, useTLS, err := parseAddr(addr, o.tls != nil)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if useTLS {
		cfg := o.tls
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		creds = credentials.NewTLS(cfg)
	}
	c := &Client{mem: o.mem, addr: addr}
	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes),
			grpc.ForceCodecV2(flightcodec.New())), // batches received are copied once, not twice
		// Bigger HTTP/2 windows than gRPC's 64 KiB start keep bulk DoPut and
		// DoGet from stalling on window updates.
		grpc.WithInitialWindowSize(16 << 20),
		grpc.WithInitialConnWindowSize(16 << 20),
		grpc.WithChainUnaryInterceptor(c.unaryAuth),
		grpc.WithChainStreamInterceptor(c.streamAuth),
	}
	dialOpts = append(dialOpts, o.dialOpts...)
	fc, err := flight.NewClientWithMiddlewareCtx(ctx, target, nil, nil, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	c.fc = fc
	if o.bearer != "" {
		tok := "Bearer " + o.bearer
		c.token.Store(&tok)
	}
	if o.basicAuth {
		actx, err := fc.AuthenticateBasicToken(ctx, o.user, o.pass)
		if err != nil {
			fc.Close()
			return nil, fmt.Errorf("handshake with %s as %q: %w", addr, o.user, err)
		}
		md, _ := metadata.FromOutgoingContext(actx)
		vals := md.Get("authorization")
		if len(vals) == 0 {
			fc.Close()
			return nil, fmt.Errorf("handshake with %s: no bearer token in the response", addr)
		}
		tok := vals[len(vals)-1]
		c.token.Store(&tok)
	}
	return c, nil
}

// addrForms is what an address may look like, for the errors that refuse one.
const addrForms = "want host:port, grpc://host:port or grpc+tls://host:port"

// parseAddr turns a Flight URI or host:port into a gRPC target, and says
// whether to speak TLS: a grpc+tls:// address, or a bare host:port dialled
// with TLS options.
func parseAddr(addr string, withTLS bool) (target string, useTLS bool, err error) {
	plain := false // the address says plain gRPC
	switch {
	case addr == "":
		return DefaultAddr, withTLS, nil
	case strings.HasPrefix(addr, "grpc+tls://"):
		target, useTLS = strings.TrimPrefix(addr, "grpc+tls://"), true
	case strings.HasPrefix(addr, "grpc+tcp://"):
		target, plain = strings.TrimPrefix(addr, "grpc+tcp://"), true
	case strings.HasPrefix(addr, "grpc://"):
		target, plain = strings.TrimPrefix(addr, "grpc://"), true
	case strings.HasPrefix(addr, "unix://"), strings.HasPrefix(addr, "dns:"), strings.HasPrefix(addr, "passthrough:"):
		return addr, withTLS, nil
	case strings.Contains(addr, "://"):
		return "", false, fmt.Errorf("address %q: %s", addr, addrForms)
	default:
		target = addr
	}
	target = strings.TrimSuffix(target, "/")
	if _, port, err := net.SplitHostPort(target); err != nil || port == "" || strings.Contains(target, "/") {
		return "", false, fmt.Errorf("address %q: %s", addr, addrForms)
	}
	if plain && withTLS {
		return "", false, fmt.Errorf("address %q is plain gRPC but TLS options were given: use grpc+tls://%s", addr, target)
	}
	return target, useTLS || withTLS, nil
}

// Close closes the connection. Streams still open fail.
func (c *Client) Close() error { return c.fc.Close() }

// Addr returns the address the client was dialled with.
func (c *Client) Addr() string { return c.addr }

// Allocator returns the client's allocator.
func (c *Client) Allocator() memory.Allocator { return c.mem }

// Flight returns the underlying Flight client, for calls this package does not
// wrap. Calls through it carry the bearer token too.
func (c *Client) Flight() flight.Client { return c.fc }

func (c *Client) withAuth(ctx context.Context) context.Context {
	if tok := c.token.Load(); tok != nil {
		return metadata.AppendToOutgoingContext(ctx, "authorization", *tok)
	}
	return ctx
}

func (c *Client) unaryAuth(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(c.withAuth(ctx), method, req, reply, cc, opts...)
}

func (c *Client) streamAuth(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(c.withAuth(ctx), desc, cc, method, opts...)
}

// errStreamClosed reports use of a writer or stream after Close.
var errStreamClosed = errors.New("fluxgate client: use after close")
