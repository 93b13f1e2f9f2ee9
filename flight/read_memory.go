package flight

import (
	"bytes"
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/fluxgate-io/fluxgate/internal/flightcodec"
)

// readMemory is what one DoGet holds against the memory budget, as a DoPut
// holds what it received (limits.go): the log frames it has read and not
// yet sent, as read and decoded (the engine waits for the budget before it
// reads each: engine.ReadMemory), and its messages that gRPC has not yet
// written. A message is sent from a buffer of sendBuffers without being
// copied again (flightcodec.Outgoing), and gRPC says when it is done with
// it, so a reader whose client stops taking messages, and which therefore
// stops in Send, holds exactly what it read and sent, counted.
//
// A frame is held with sendAllowance for the messages it is sent in; the
// messages a stream has in gRPC's hands beyond the allowances of the frames
// it holds (the last messages of a frame it has let go, those of reads
// without frames) are held without waiting, so that letting go of a frame
// never waits, nor takes the budget past its total.
type readMemory struct {
	b      *byteBudget
	mu     sync.Mutex
	allow  int64 // sendAllowance of the frames held; guarded by mu
	out    int64 // bytes of messages gRPC holds; guarded by mu
	grown  int64 // of out beyond allow, held with grow; guarded by mu
	closed bool  // guarded by mu
}

// sendAllowance is what a frame of n bytes holds for its messages: two of
// them (gRPC holds the message Send last handed it, and all but the last 64
// KiB of the one before: its write quota per stream), each as large as the
// frame or the largest message a read sends.
func sendAllowance(n int64) int64 { return 2 * min(n, maxSendBytes) }

// allowanceOf is the sendAllowance within h held for a frame (the inverse of
// h = n + sendAllowance(n)).
func allowanceOf(h int64) int64 { return min(2*h/3, 2*maxSendBytes) }

// maxSendBytes bounds the messages of a read: its batches are under 3 MiB
// (engine.MaxBatchBytes) and a batch's metadata is small.
const maxSendBytes = 4 << 20

func newReadMemory(b *byteBudget) *readMemory { return &readMemory{b: b} }

// Acquire holds a frame of n bytes (engine.ReadMemory).
func (m *readMemory) Acquire(ctx context.Context, n int64) (int64, error) {
	h := m.b.capped(n + sendAllowance(n))
	if err := m.b.acquire(ctx, h); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.allow += allowanceOf(h)
	m.settleLocked()
	return h, nil
}

// Release lets go of a frame Acquire held h for.
func (m *readMemory) Release(h int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.allow -= allowanceOf(h)
	m.settleLocked() // before the release, which lets waiters in
	m.b.release(h)
}

func (m *readMemory) sent(n int64)  { m.add(n) }
func (m *readMemory) freed(n int64) { m.add(-n) }

func (m *readMemory) add(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.out += n
		m.settleLocked()
	}
}

// settleLocked holds the bytes of messages beyond the allowances.
func (m *readMemory) settleLocked() {
	want := max(m.out-m.allow, 0)
	if want > m.grown {
		m.b.grow(want - m.grown)
	} else {
		m.b.release(m.grown - want)
	}
	m.grown = want
}

// close gives back what the stream's messages hold when it ends: gRPC drops
// them with the stream (and what it frees later is no longer counted).
func (m *readMemory) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.b.release(m.grown)
	m.grown, m.out = 0, 0
}

// sendBuffers are the buffers a read's messages are encoded in: one goes
// back once gRPC has written its message, so a stream holds none between
// sends (a follower idle at the tail of a log, or one waiting for the
// budget).
var sendBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// send sends a message whose body is in body, a buffer of sendBuffers,
// which gRPC takes without copying: it goes back to sendBuffers, and the
// stream's memory lets go of it, once gRPC is done with it.
func (m *readMemory) send(stream flight.FlightService_DoGetServer, header, md []byte, body *bytes.Buffer) error {
	n := int64(body.Cap())
	m.sent(n)
	return stream.SendMsg(&flightcodec.Outgoing{
		FlightData: &flight.FlightData{DataHeader: header, AppMetadata: md, DataBody: body.Bytes()},
		Free: func() {
			m.freed(n)
			sendBuffers.Put(body)
		},
	})
}
