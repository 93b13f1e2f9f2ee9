package laketier

import "context"

// ctxMutex is a mutex whose waiters give up when their context is done:
// the tier's locks are held across lake calls, which may take long.
type ctxMutex chan struct{}

// newCtxMutex returns an unlocked ctxMutex.
func newCtxMutex() ctxMutex { return make(ctxMutex, 1) }

// Lock locks m, or returns ctx's error if ctx is done first.
func (m ctxMutex) Lock(ctx context.Context) error {
	select {
	case m <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LockWait locks m whatever it takes, for work that must not stop half-way.
func (m ctxMutex) LockWait() { m <- struct{}{} }

func (m ctxMutex) Unlock() { <-m }
