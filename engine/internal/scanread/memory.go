package scanread

import "context"

// Memory is a budget of bytes that a stream holds the log frames it reads
// against: each frame's, as read and as decoded, from before it is read until
// it has been sent. The Flight service gives each DoGet its server's, so
// that readers wait for memory as writers do, and a reader whose client
// stopped taking batches holds what it read, and reads no more.
type Memory interface {
	// Acquire waits until n bytes are held, or ctx ends; it returns what it
	// holds, which is less than n for a frame larger than the budget.
	Acquire(ctx context.Context, n int64) (int64, error)
	// Release gives back bytes that Acquire held.
	Release(n int64)
}

// HoldMemory makes the stream hold the log frames it reads against m.
func (rs *Stream) HoldMemory(m Memory) { rs.mem = m }

// frameMemory admits one reader's frames into a stream's Memory: the
// reader calls admit before it reads a frame, and whoever reads the frame
// takes what was admitted for it with take, and releases it once the frame
// is sent or dropped. One goroutine reads at a time.
type frameMemory struct {
	ctx  context.Context
	mem  Memory
	held int64 // admitted for the frame being read, not yet taken
}

func (m *frameMemory) admit(n int64) error {
	m.mem.Release(m.held) // a frame the reader passed over
	held, err := m.mem.Acquire(m.ctx, n)
	m.held = held
	return err
}

func (m *frameMemory) take() int64 {
	n := m.held
	m.held = 0
	return n
}

func (m *frameMemory) release(n int64) {
	if m != nil && n > 0 {
		m.mem.Release(n)
	}
}
