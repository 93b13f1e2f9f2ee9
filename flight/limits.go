package flight

import (
	"context"
	"net"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc/peer"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Limits protect the server from clients that open too much or send too
// fast. The zero value means the defaults.
type Limits struct {
	// MaxStreamsPerClient bounds the streaming calls (DoGet, DoPut, DoExchange)
	// one client host has open at once; more are RESOURCE_EXHAUSTED.
	// Default 256; negative means no limit.
	MaxStreamsPerClient int
	// MaxWriteBytes is the memory budget: what the server holds for clients'
	// streams, over all of them. Clients past it wait, which slows them
	// through gRPC's flow control, instead of growing the server. It
	// counts, each from the moment it is in memory until it is let go:
	//   - a DoPut message being received, at twice MaxMessageBytes (gRPC
	//     receives a message whole, before its size is known, into buffers
	//     of its own that the codec then copies it out of), and then the
	//     message, and what its compressed body decompresses to, until the
	//     batch is acknowledged; so MaxWriteBytes / (2 × MaxMessageBytes) streams
	//     receive at once;
	//   - a batch being appended, at encodeFactor times its size (the
	//     store's flat copy and compressed pieces of it), out of a share of
	//     the budget kept for that (see newLimits), so that appending never
	//     waits on bytes held by streams that wait themselves;
	//   - a DoGet's log frames read and not yet sent, as read and decoded,
	//     and its messages that gRPC has not yet written (read_memory.go).
	// Default 1 GiB.
	MaxWriteBytes int64
	// MaxMessageBytes is the largest message a client may send (gRPC's
	// MaxRecvMsgSize, set by ServerOptions), and the most a compressed
	// batch may claim to decompress to. Default 64 MiB.
	MaxMessageBytes int
	// StreamIdleTimeout ends a DoPut or DoExchange stream whose client has sent
	// nothing for that long (not counting time the server itself is not
	// reading, such as waiting on MaxWriteBytes), and a DoGet whose client has
	// taken nothing for that long while the server waited on it (stall.go),
	// with RESOURCE_EXHAUSTED. Default 10 minutes; negative means never.
	StreamIdleTimeout time.Duration
}

type limits struct {
	Limits
	mu      sync.Mutex
	streams map[string]int // open streaming calls per client host; guarded by mu
	// bytes holds what streams receive and read; encoding the batches
	// being appended. Together they are the memory budget.
	bytes, encoding *byteBudget
}

// encodeFactor is what appending a batch holds, in multiples of its size:
// the store's flat copy of a column body, its compressed pieces, and their
// concatenation (logstore's Encoder).
const encodeFactor = 3

// receiveFactor is what a message being received holds, in multiples of its
// size: gRPC's buffers and the codec's copy.
const receiveFactor = 2

func newLimits(l Limits) limits {
	l = l.withDefaults()
	// Appending takes a share of the budget of its own: one batch of the
	// largest size, or half of a smaller budget.
	encoding := min(encodeFactor*int64(l.MaxMessageBytes), l.MaxWriteBytes/2)
	return limits{Limits: l, streams: map[string]int{},
		bytes: newByteBudget(l.MaxWriteBytes - encoding), encoding: newByteBudget(encoding)}
}

// withDefaults returns l with each zero limit set to its default.
func (l Limits) withDefaults() Limits {
	if l.MaxStreamsPerClient == 0 {
		l.MaxStreamsPerClient = protocol.DefaultMaxStreamsPerClient
	}
	if l.MaxWriteBytes <= 0 {
		l.MaxWriteBytes = protocol.DefaultMaxWriteBytes
	}
	if l.MaxMessageBytes <= 0 {
		l.MaxMessageBytes = protocol.DefaultMaxMessageBytes
	}
	if l.StreamIdleTimeout == 0 {
		l.StreamIdleTimeout = protocol.DefaultStreamIdleTimeout
	}
	return l
}

// Budget is the memory budget: MaxWriteBytes, or its default.
func (l Limits) Budget() int64 { return l.withDefaults().MaxWriteBytes }

// openStream counts a streaming call of the client behind ctx; the returned
// func ends it.
func (l *limits) openStream(ctx context.Context, rpc string) (func(), error) {
	if l.MaxStreamsPerClient < 0 {
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
	if l.streams[host] >= l.MaxStreamsPerClient {
		return nil, errs.New(errs.ResourceExhausted, "%s: client %s has %d streams open, the limit", rpc, host, l.MaxStreamsPerClient)
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

// byteBudget is a budget of bytes. Waiters are served in order, so a large
// request is not starved by small ones, and requests are capped at its size,
// so that one larger than the whole budget waits for all of it instead of
// forever. What is already in memory (a message gRPC holds until it is
// written) is added with grow, without waiting, and may take the budget past
// its total until it is released.
type byteBudget struct {
	total int64
	mu    sync.Mutex
	used  int64     // guarded by mu
	queue []*waiter // guarded by mu
}

type waiter struct {
	n     int64
	ready chan struct{} // closed when n is granted
}

func newByteBudget(n int64) *byteBudget { return &byteBudget{total: n} }

// capped is what acquire(n) holds: n, at most the whole budget.
func (b *byteBudget) capped(n int64) int64 { return min(n, b.total) }

// acquire waits until capped(n) bytes are free, and holds them, or until ctx
// ends.
func (b *byteBudget) acquire(ctx context.Context, n int64) error {
	n = b.capped(n)
	b.mu.Lock()
	if len(b.queue) == 0 && b.used+n <= b.total {
		b.used += n
		b.mu.Unlock()
		return nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	b.queue = append(b.queue, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // granted meanwhile
		b.used -= n
	default:
		b.queue = slices.DeleteFunc(b.queue, func(q *waiter) bool { return q == w })
	}
	b.grantLocked()
	return ctx.Err()
}

// grow holds n more bytes without waiting.
func (b *byteBudget) grow(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used += n
}

// release gives back n bytes held by acquire or grow.
func (b *byteBudget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	b.grantLocked()
}

// grantLocked hands free bytes to the waiters at the head of the queue.
func (b *byteBudget) grantLocked() {
	for len(b.queue) > 0 && b.used+b.queue[0].n <= b.total {
		w := b.queue[0]
		b.queue = b.queue[1:]
		b.used += w.n
		close(w.ready)
	}
}

// inUse is the bytes held (tests).
func (b *byteBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
