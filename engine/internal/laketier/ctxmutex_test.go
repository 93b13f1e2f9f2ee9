package laketier

import (
	"context"
	"errors"
	"testing"
)

// A waiter whose context ends gives up with its context's error, and the
// mutex stays held by its holder until Unlock.
func TestCtxMutexWaiterGivesUpWithItsContext(t *testing.T) {
	m := newCtxMutex()
	if err := m.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Lock(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock of a held mutex under a canceled context = %v, want context.Canceled", err)
	}
	m.Unlock()
	if err := m.Lock(context.Background()); err != nil {
		t.Fatalf("Lock after Unlock = %v", err)
	}
	m.Unlock()
}
