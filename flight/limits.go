package flight

import (
	"context"
	"net"
	"sync"
	"time"

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

// byteBudget is a counting semaphore of bytes.
type byteBudget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	free  int64
	total int64
}

func newByteBudget(n int64) *byteBudget {
	b := &byteBudget{free: n, total: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire waits until n bytes are free (a batch larger than the whole budget
// waits for all of it) or ctx ends.
func (b *byteBudget) acquire(ctx context.Context, n int64) error {
	n = min(n, b.total)
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.free < n {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.cond.Wait()
	}
	b.free -= n
	return nil
}

func (b *byteBudget) release(n int64) {
	n = min(n, b.total)
	b.mu.Lock()
	b.free += n
	b.cond.Broadcast()
	b.mu.Unlock()
}
