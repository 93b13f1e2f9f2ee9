package auth

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// 60 concurrent wrong-password handshakes from one address get their
// passwords checked only Burst times; one more waits for a refill, and the
// rest are refused at once, with a retry-after trailer, so they cannot take
// every core from other callers. The right password, sent while throttled,
// waits for the next refill and is let through.
func TestHandshakeFloodIsThrottled(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	a, err := New(testUsers(t, ""), Options{Now: clock.Now, After: clock.After, Throttle: ThrottleOptions{Burst: 10, Refill: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	srv := flight.NewServerWithMiddleware(a.Middleware())
	srv.RegisterFlightService(&flight.BaseFlightServer{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.InitListener(ln)
	go srv.Serve()
	t.Cleanup(srv.Shutdown)
	fc, err := flight.NewClientWithMiddleware(ln.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var mu sync.Mutex
	got := map[codes.Code]int{}
	var retryAfter []string
	var wg sync.WaitGroup
	for range 60 {
		wg.Go(func() {
			var trailer metadata.MD
			_, err := fc.AuthenticateBasicToken(ctx, "ann", "wrong", grpc.Trailer(&trailer))
			mu.Lock()
			defer mu.Unlock()
			got[status.Code(err)]++
			if status.Code(err) == codes.ResourceExhausted {
				retryAfter = append(retryAfter, trailer.Get(RetryAfterKey)...)
			}
		})
	}
	clock.awaitTimers(t, 1) // the one that waits
	answered := func() int {
		mu.Lock()
		defer mu.Unlock()
		return got[codes.Unauthenticated] + got[codes.ResourceExhausted]
	}
	for deadline := time.Now().Add(10 * time.Second); answered() < 59; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 59 handshakes answered after 10s", answered())
		}
	}
	clock.Advance(time.Second)
	wg.Wait()
	if got[codes.Unauthenticated] != 11 || got[codes.ResourceExhausted] != 49 {
		t.Fatalf("60 wrong passwords: %v; want 11 checked (UNAUTHENTICATED: a burst of 10, one after the refill) and 49 refused (RESOURCE_EXHAUSTED)", got)
	}
	if len(retryAfter) != 49 || retryAfter[0] != "1" {
		t.Fatalf("refused handshakes' %s trailers: %v, want 49 of 1 (second)", RetryAfterKey, retryAfter)
	}

	right := make(chan error, 1)
	go func() {
		_, err := fc.AuthenticateBasicToken(ctx, "ann", "ann-pw")
		right <- err
	}()
	clock.awaitTimers(t, 1)
	clock.Advance(time.Second)
	if err := waitErr(t, right); err != nil {
		t.Fatalf("right password while throttled, after the refill: %v", err)
	}
}
