package auth

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
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
// keeps failing gets one check per Refill (bcrypt is the expensive part of a
// handshake, and what a flood of wrong passwords would spend every core on),
// while good handshakes are never refused for the failures of others: beyond
// Burst at once they wait for the checks in progress, and one handshake per
// address whose tokens are spent waits for the next (at most Refill), so that
// the right password after a run of wrong ones is checked instead of refused.
// Others are refused (RESOURCE_EXHAUSTED, saying when to retry: RetryAfter).
type Throttle struct {
	opts  ThrottleOptions
	now   func() time.Time
	after func(time.Duration) <-chan time.Time

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
	waiting bool          // a handshake waits for the next token
}

// NewThrottle returns a Throttle; now is its clock (nil: time.Now), and
// after its timer (nil: time.After).
func NewThrottle(opts ThrottleOptions, now func() time.Time, after func(time.Duration) <-chan time.Time) *Throttle {
	if now == nil {
		now = time.Now
	}
	if after == nil {
		after = time.After
	}
	t := &Throttle{opts: opts.withDefaults(), now: now, after: after}
	t.mu.addrs = map[string]*addrBucket{}
	return t
}

// Acquire lets one password check of addr go ahead, waiting while addr's
// tokens are held by checks in progress, or, if no other handshake of addr
// does, for addr's next token. Otherwise it is a ThrottledError. end must
// be called with the check's outcome.
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
		var wake <-chan time.Time
		done := b.done
		if b.pending == 0 {
			next := time.Duration(math.Ceil((1 - b.tokens) * float64(t.opts.Refill)))
			if b.waiting {
				t.mu.Unlock()
				return nil, &ThrottledError{Addr: addr, RetryAfter: next}
			}
			b.waiting, wake = true, t.after(next)
		}
		t.mu.Unlock()
		select {
		case <-done:
		case <-wake:
		case <-ctx.Done():
			err = status.FromContextError(ctx.Err()).Err()
		}
		if wake != nil {
			t.mu.Lock()
			b.waiting = false
			t.mu.Unlock()
		}
		if err != nil {
			return nil, err
		}
	}
}

// ThrottledError refuses a password check: its address (or, with Addr
// empty, every tracked address) spent its tokens on failures. It is a gRPC
// RESOURCE_EXHAUSTED status.
type ThrottledError struct {
	Addr       string
	Addresses  int           // with Addr empty: how many are tracked
	RetryAfter time.Duration // when a check will be let through again
}

func (e *ThrottledError) Error() string {
	if e.Addr == "" {
		return fmt.Sprintf("too many failed handshakes from %d addresses: retry in %v", e.Addresses, e.RetryAfter.Round(time.Millisecond))
	}
	return fmt.Sprintf("too many failed handshakes from %s: retry in %v", e.Addr, e.RetryAfter.Round(time.Millisecond))
}

// GRPCStatus makes the error RESOURCE_EXHAUSTED.
func (e *ThrottledError) GRPCStatus() *status.Status {
	return status.New(codes.ResourceExhausted, e.Error())
}

// RetryAfter is when a check refused by the throttle will be let through
// again; ok is false for other errors.
func RetryAfter(err error) (d time.Duration, ok bool) {
	var te *ThrottledError
	if errors.As(err, &te) {
		return te.RetryAfter, true
	}
	return 0, false
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
				return nil, &ThrottledError{Addresses: len(t.mu.addrs), RetryAfter: t.opts.Refill}
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
		if d, ok := RetryAfter(err); ok {
			stream.SetTrailer(metadata.Pairs(RetryAfterKey, retryAfterSeconds(d)))
		}
		return err
	}
	err = handler(srv, stream)
	end(status.Code(err) == codes.Unauthenticated)
	return err
}

// RetryAfterKey is the trailer of a Handshake the throttle refused: whole
// seconds until it lets a check through again, as HTTP's Retry-After.
const RetryAfterKey = "retry-after"

// retryAfterSeconds is d in whole seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
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
