package auth

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fakeClock is a clock that moves only when told, with timers that fire
// when it passes them.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.timers = append(c.timers, fakeTimer{c.t.Add(d), ch})
	c.fireLocked()
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.fireLocked()
}

func (c *fakeClock) fireLocked() {
	c.timers = slices.DeleteFunc(c.timers, func(tm fakeTimer) bool {
		if tm.at.After(c.t) {
			return false
		}
		tm.ch <- c.t
		return true
	})
}

// awaitTimers waits until n timers are set, as many handshakes waiting.
func (c *fakeClock) awaitTimers(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		got := len(c.timers)
		c.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d handshakes wait for the throttle after 10s, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_000_000, 0)} }

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

// An address gets Burst failures in a row, then one check per Refill: one
// handshake waits for it (the right password after a run of wrong ones is
// checked, not refused), and the others are refused, saying when to retry.
func TestThrottleFailuresPerAddress(t *testing.T) {
	clock := newFakeClock()
	th := NewThrottle(ThrottleOptions{Burst: 3, Refill: time.Second}, clock.Now, clock.After)
	for i := range 3 {
		if !fail(t, th, "10.0.0.1") {
			t.Fatalf("failure %d of a burst of 3 was refused", i+1)
		}
	}
	waiting := make(chan error, 1)
	go func() {
		end, err := th.Acquire(context.Background(), "10.0.0.1")
		if err == nil {
			end(false) // the right password
		}
		waiting <- err
	}()
	clock.awaitTimers(t, 1)
	_, err := th.Acquire(context.Background(), "10.0.0.1")
	if d, ok := RetryAfter(err); !ok || d != time.Second || status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a second handshake while one waits: %v (retry after %v), want RESOURCE_EXHAUSTED, retry after 1s", err, d)
	}
	if !fail(t, th, "10.0.0.2") {
		t.Fatal("another address was throttled")
	}
	clock.Advance(999 * time.Millisecond)
	select {
	case err := <-waiting:
		t.Fatalf("the waiting handshake went ahead before a refill: %v", err)
	default:
	}
	clock.Advance(time.Millisecond)
	if err := waitErr(t, waiting); err != nil {
		t.Fatalf("the waiting handshake after a refill: %v", err)
	}
	// It succeeded: its token is back, for one more failure.
	if !fail(t, th, "10.0.0.1") {
		t.Fatal("a success did not give its token back")
	}
}

// Good handshakes give their token back: however many, none is refused.
func TestThrottleSuccessesAreFree(t *testing.T) {
	clock := newFakeClock()
	th := NewThrottle(ThrottleOptions{Burst: 2, Refill: time.Hour}, clock.Now, clock.After)
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
// goes ahead if that one succeeded, and otherwise waits for the next refill,
// as one handshake of an address whose tokens are spent does.
func TestThrottleWaitsForChecksInProgress(t *testing.T) {
	clock := newFakeClock()
	th := NewThrottle(ThrottleOptions{Burst: 2, Refill: time.Hour}, clock.Now, clock.After)
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
	fifth := waiter()
	clock.awaitTimers(t, 1)
	clock.Advance(time.Hour)
	if err := waitErr(t, fifth); err != nil {
		t.Fatalf("every token spent on failures, then a refill: %v", err)
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
	clock := newFakeClock()
	th := NewThrottle(ThrottleOptions{Burst: 1, Refill: time.Second, MaxAddresses: 4}, clock.Now, clock.After)
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
