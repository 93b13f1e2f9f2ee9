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
	"google.golang.org/grpc/status"
)

// 60 concurrent wrong-password handshakes from one address get their
// passwords checked only Burst times; the rest are refused at once, so
// they cannot take every core from other callers. Then even the right
// password waits for a refill, which the injected clock gives.
func TestHandshakeFloodIsThrottled(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	a, err := New(testUsers(t, ""), Options{Now: clock.Now, Throttle: ThrottleOptions{Burst: 10, Refill: time.Second}})
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
	var wg sync.WaitGroup
	for range 60 {
		wg.Go(func() {
			_, err := fc.AuthenticateBasicToken(ctx, "ann", "wrong")
			mu.Lock()
			got[status.Code(err)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if got[codes.Unauthenticated] != 10 || got[codes.ResourceExhausted] != 50 {
		t.Fatalf("60 wrong passwords: %v; want 10 checked (UNAUTHENTICATED) and 50 refused (RESOURCE_EXHAUSTED)", got)
	}
	if _, err := fc.AuthenticateBasicToken(ctx, "ann", "ann-pw"); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("right password while throttled: %v, want RESOURCE_EXHAUSTED", err)
	}
	clock.Advance(time.Second)
	if _, err := fc.AuthenticateBasicToken(ctx, "ann", "ann-pw"); err != nil {
		t.Fatalf("right password after a refill: %v", err)
	}
}
