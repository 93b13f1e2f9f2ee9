package auth

import (
	"context"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// ThrottleOptions limit password checks per client address (PROTOCOL.md §8).
// The zero value means the defaults.
type ThrottleOptions struct {
	// Burst is how many handshakes an address may fail in a row, and how
	// many of its handshakes are checked at once; default 10.
	Burst int
	// Refill gives an address one more allowed failure each Refill; default
	// 1s.
	Refill time.Duration
	// MaxAddresses bounds the addresses tracked at once; default 10,000.
	// When all are throttled, handshakes from new addresses are refused
	// too, until one refills.
	MaxAddresses int
}

func (o ThrottleOptions) withDefaults() ThrottleOptions {
	if o.Burst <= 0 {
		o.Burst = 10
	}
	if o.Refill <= 0 {
		o.Refill = time.Second
	}
	if o.MaxAddresses <= 0 {
		o.MaxAddresses = 10_000
	}
	return o
}

// Throttle is a token bucket per client address over password checks. A
// check takes a token and a successful one gives it back, so an address that
// keeps failing is refused without a check (bcrypt is the expensive part of
// a handshake, and what a flood of wrong passwords would spend every core
// on), while good handshakes are never refused: beyond Burst at once they
// wait for the ones in progress.
type Throttle struct {
	opts ThrottleOptions
	now  func() time.Time

	mu struct {
		sync.Mutex
		addrs map[string]*addrBucket
	}
}

type addrBucket struct {
	tokens  float64
	at      time.Time     // when tokens was last refilled
	pending int           // checks in progress, each holding a token
	done    chan struct{} // closed when a check in progress ends
}

// NewThrottle returns a Throttle; now is its clock (nil: time.Now).
func NewThrottle(opts ThrottleOptions, now func() time.Time) *Throttle {
	if now == nil {
		now = time.Now
	}
	t := &Throttle{opts: opts.withDefaults(), now: now}
	t.mu.addrs = map[string]*addrBucket{}
	return t
}

// Acquire lets one password check of addr go ahead, waiting while addr's
// tokens are held by checks in progress. Without tokens and with none in
// progress it is RESOURCE_EXHAUSTED, saying when to retry. end must be
// called with the check's outcome.
func (t *Throttle) Acquire(ctx context.Context, addr string) (end func(failed bool), err error) {
	for {
		t.mu.Lock()
		b, err := t.bucketLocked(addr)
		if err != nil {
			t.mu.Unlock()
			return nil, err
		}
		if b.tokens >= 1 {
			b.tokens--
			b.pending++
			t.mu.Unlock()
			return func(failed bool) { t.end(b, failed) }, nil
		}
		if b.pending == 0 {
			wait := time.Duration(math.Ceil((1 - b.tokens) * float64(t.opts.Refill)))
			t.mu.Unlock()
			return nil, status.Errorf(codes.ResourceExhausted, "too many failed handshakes from %s: retry in %v", addr, wait.Round(time.Millisecond))
		}
		done := b.done
		t.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
}

func (t *Throttle) end(b *addrBucket, failed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b.pending--
	if !failed {
		b.tokens = min(b.tokens+1, float64(t.opts.Burst))
	}
	close(b.done)
	b.done = make(chan struct{})
}

// bucketLocked returns addr's bucket, refilled to now. A new address finds
// room by forgetting the addresses that are back to a full bucket (they are
// as good as new); when none is, it is refused.
func (t *Throttle) bucketLocked(addr string) (*addrBucket, error) {
	now := t.now()
	b, ok := t.mu.addrs[addr]
	if !ok {
		if len(t.mu.addrs) >= t.opts.MaxAddresses {
			for a, other := range t.mu.addrs {
				if t.refill(other, now); other.pending == 0 && other.tokens >= float64(t.opts.Burst) {
					delete(t.mu.addrs, a)
				}
			}
			if len(t.mu.addrs) >= t.opts.MaxAddresses {
				return nil, status.Errorf(codes.ResourceExhausted, "too many failed handshakes from %d addresses: retry in %v", len(t.mu.addrs), t.opts.Refill)
			}
		}
		b = &addrBucket{tokens: float64(t.opts.Burst), at: now, done: make(chan struct{})}
		t.mu.addrs[addr] = b
	}
	t.refill(b, now)
	return b, nil
}

func (t *Throttle) refill(b *addrBucket, now time.Time) {
	if now.After(b.at) {
		b.tokens = min(b.tokens+float64(now.Sub(b.at))/float64(t.opts.Refill), float64(t.opts.Burst))
		b.at = now
	}
}

// Middleware is the server middleware of an Authenticator: arrow-go's basic
// auth (Handshake with basic credentials returns a bearer token; every other
// call but ListActions needs one), behind the Throttle of failed handshakes
// per client address. Give it to flight.NewServerWithMiddleware.
func (a *Authenticator) Middleware() []flight.ServerMiddleware {
	basic := flight.CreateServerBasicAuthMiddleware(a)
	basic.Stream = publicListActions(basic.Stream)
	return []flight.ServerMiddleware{
		{Stream: a.throttleHandshakes},
		basic,
	}
}

// throttleHandshakes runs a Handshake only when its address may have its
// password checked, and counts its failure.
func (a *Authenticator) throttleHandshakes(srv any, stream grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !strings.HasSuffix(info.FullMethod, "/Handshake") {
		return handler(srv, stream)
	}
	end, err := a.throttle.Acquire(stream.Context(), peerHost(stream.Context()))
	if err != nil {
		return err
	}
	err = handler(srv, stream)
	end(status.Code(err) == codes.Unauthenticated)
	return err
}

// peerHost is the caller's IP address without the port: every connection
// from one host counts as that host.
func peerHost(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "unknown"
	}
	if host, _, err := net.SplitHostPort(p.Addr.String()); err == nil {
		return host
	}
	return fmt.Sprint(p.Addr)
}
