package flight

import (
	"context"
	"net"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	"google.golang.org/grpc/peer"

	"github.com/fluxgate-io/fluxgate/errs"
)

// Limits protect the server from clients that open too much or send too
// fast. The zero value means the defaults.
type Limits struct {
	// StreamsPerClient bounds the streaming calls (DoGet, DoPut, DoExchange)
	// one client host has open at once; more are RESOURCE_EXHAUSTED.
	// Default 256; negative means no limit.
	StreamsPerClient int
	// WriteBytes bounds the bytes of written batches that are received but
	// not yet acknowledged, over all streams. A stream that would go over
	// waits before reading on, which slows its client through gRPC's flow
	// control. A DoPut stream waiting for its client's next batch holds
	// MessageBytes of it (gRPC receives a message whole, before its size is
	// known), so WriteBytes / MessageBytes streams receive at once.
	// Default 1 GiB.
	WriteBytes int64
	// MessageBytes is the largest message a client may send (gRPC's
	// MaxRecvMsgSize, set by ServerOptions), and the most a compressed
	// batch may claim to decompress to. Default 64 MiB.
	MessageBytes int
	// IdleTimeout ends a DoPut or DoExchange stream whose client has sent
	// nothing for that long (not counting time the server itself is not
	// reading, such as waiting on WriteBytes) with RESOURCE_EXHAUSTED.
	// Default 10 minutes; negative means never.
	IdleTimeout time.Duration
}

type limits struct {
	Limits
	mu      sync.Mutex
	streams map[string]int // open streaming calls per client host; guarded by mu
	bytes   *byteBudget
}

func newLimits(l Limits) limits {
	l = l.withDefaults()
	return limits{Limits: l, streams: map[string]int{}, bytes: newByteBudget(l.WriteBytes)}
}

// withDefaults returns l with each zero limit set to its default.
func (l Limits) withDefaults() Limits {
	if l.StreamsPerClient == 0 {
		l.StreamsPerClient = 256
	}
	if l.WriteBytes <= 0 {
		l.WriteBytes = 1 << 30
	}
	if l.MessageBytes <= 0 {
		l.MessageBytes = 64 << 20
	}
	if l.IdleTimeout == 0 {
		l.IdleTimeout = 10 * time.Minute
	}
	return l
}

// openStream counts a streaming call of the client behind ctx; the returned
// func ends it.
func (l *limits) openStream(ctx context.Context, rpc string) (func(), error) {
	if l.StreamsPerClient < 0 {
		return func() {}, nil
	}
	host := "unknown"
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		if h, _, err := net.SplitHostPort(p.Addr.String()); err == nil {
			host = h
		} else {
			host = p.Addr.String()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams[host] >= l.StreamsPerClient {
		return nil, errs.New(errs.Exhausted, "%s: client %s has %d streams open, the limit", rpc, host, l.StreamsPerClient)
	}
	l.streams[host]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.streams[host]--; l.streams[host] == 0 {
			delete(l.streams, host)
		}
	}, nil
}

// byteBudget is a semaphore of bytes whose requests are capped at its size, so
// that a batch larger than the whole budget waits for all of it instead of
// forever.
type byteBudget struct {
	sem   *semaphore.Weighted
	total int64
}

func newByteBudget(n int64) *byteBudget {
	return &byteBudget{sem: semaphore.NewWeighted(n), total: n}
}

// acquire waits until n bytes are free or ctx ends. Waiters are served in
// order, so a large batch is not starved by small ones.
func (b *byteBudget) acquire(ctx context.Context, n int64) error {
	return b.sem.Acquire(ctx, min(n, b.total))
}

func (b *byteBudget) release(n int64) {
	b.sem.Release(min(n, b.total))
}
