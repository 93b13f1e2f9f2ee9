package table

import "context"

// CtxMutex is a mutex whose waiters give up when their context is done:
// the tier's locks are held across lake calls, which may take long.
type CtxMutex chan struct{}

// newCtxMutex returns an unlocked CtxMutex.
func newCtxMutex() CtxMutex { return make(CtxMutex, 1) }

// Lock locks m, or returns ctx's error if ctx is done first.
func (m CtxMutex) Lock(ctx context.Context) error {
	select {
	case m <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LockWait locks m whatever it takes, for work that must not stop half-way.
func (m CtxMutex) LockWait() { m <- struct{}{} }

func (m CtxMutex) Unlock() { <-m }
