package auth

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fail runs one failed check from addr and reports whether it was let through.
func fail(t *testing.T, th *Throttle, addr string) bool {
	t.Helper()
	end, err := th.Acquire(context.Background(), addr)
	if err != nil {
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("%s: %v, want RESOURCE_EXHAUSTED", addr, err)
		}
		return false
	}
	end(true)
	return true
}

func TestThrottleFailuresPerAddress(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	th := NewThrottle(ThrottleOptions{Burst: 3, Refill: time.Second}, clock.Now)
	for i := range 3 {
		if !fail(t, th, "10.0.0.1") {
			t.Fatalf("failure %d of a burst of 3 was refused", i+1)
		}
	}
	if fail(t, th, "10.0.0.1") {
		t.Fatal("a 4th failure in a row was let through")
	}
	if !fail(t, th, "10.0.0.2") {
		t.Fatal("another address was throttled")
	}
	clock.Advance(999 * time.Millisecond)
	if fail(t, th, "10.0.0.1") {
		t.Fatal("let through before a refill")
	}
	clock.Advance(time.Millisecond)
	if !fail(t, th, "10.0.0.1") || fail(t, th, "10.0.0.1") {
		t.Fatal("a refill of one second should allow exactly one more failure")
	}
}

// Good handshakes give their token back: however many, none is refused.
func TestThrottleSuccessesAreFree(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	th := NewThrottle(ThrottleOptions{Burst: 2, Refill: time.Hour}, clock.Now)
	fail(t, th, "h") // one failure leaves one token
	for i := range 100 {
		end, err := th.Acquire(context.Background(), "h")
		if err != nil {
			t.Fatalf("good handshake %d: %v", i, err)
		}
		end(false)
	}
}

// Beyond Burst checks at once, a handshake waits for one in progress: it
// goes ahead if that one succeeded, and is refused if every token was spent
// on failures.
func TestThrottleWaitsForChecksInProgress(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	th := NewThrottle(ThrottleOptions{Burst: 2, Refill: time.Hour}, clock.Now)
	ctx := context.Background()
	end1, err1 := th.Acquire(ctx, "h")
	end2, err2 := th.Acquire(ctx, "h")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	waiter := func() chan error {
		ch := make(chan error, 1)
		go func() {
			end, err := th.Acquire(ctx, "h")
			if err == nil {
				end(false)
			}
			ch <- err
		}()
		return ch
	}
	third := waiter()
	end1(false) // success: its token goes to the third
	if err := waitErr(t, third); err != nil {
		t.Fatalf("after a success: %v", err)
	}
	fourth := waiter()
	end2(true)
	if err := waitErr(t, fourth); err != nil {
		t.Fatalf("one token was left: %v", err)
	}
	fail(t, th, "h")
	if err := waitErr(t, waiter()); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("every token spent on failures: %v, want RESOURCE_EXHAUSTED", err)
	}

	// A waiter gives up with its caller.
	end3, err := th.Acquire(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	end4, err := th.Acquire(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	ch := make(chan error, 1)
	go func() { _, err := th.Acquire(cctx, "g"); ch <- err }()
	cancel()
	if err := waitErr(t, ch); status.Code(err) != codes.Canceled {
		t.Fatalf("cancelled waiter: %v, want CANCELED", err)
	}
	end3(false)
	end4(false)
}

func waitErr(t *testing.T, ch chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no answer within 10s")
		return nil
	}
}

// The table of addresses is bounded: when full of throttled addresses, new
// ones are refused; once they refill, they are forgotten to make room.
func TestThrottleAddressTableIsBounded(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	th := NewThrottle(ThrottleOptions{Burst: 1, Refill: time.Second, MaxAddresses: 4}, clock.Now)
	for _, a := range []string{"a", "b", "c", "d"} {
		fail(t, th, a)
	}
	if fail(t, th, "e") {
		t.Fatal("a 5th address was tracked beyond MaxAddresses 4")
	}
	clock.Advance(time.Second)
	if !fail(t, th, "e") {
		t.Fatal("refilled addresses were not forgotten")
	}
	th.mu.Lock()
	n := len(th.mu.addrs)
	th.mu.Unlock()
	if n > 4 {
		t.Fatalf("%d addresses tracked, limit 4", n)
	}
}
