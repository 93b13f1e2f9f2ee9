package main

import (
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/client"
)

// serve throttles failed handshakes per client address (auth.Throttle,
// whose behaviour auth's tests pin down with an injected clock): a flood of
// wrong passwords is refused with RESOURCE_EXHAUSTED, not checked one by one.
func TestServeThrottlesFailedHandshakes(t *testing.T) {
	srv := startAuthServer(t, "--users", writeUsers(t, auth.NewSecret()))
	var mu sync.Mutex
	got := map[codes.Code]int{}
	var wg sync.WaitGroup
	for range 60 {
		wg.Go(func() {
			_, err := dial(t, srv.FlightAddr(), client.WithBasicAuth("ann", "wrong"))
			mu.Lock()
			got[status.Code(err)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if got[codes.ResourceExhausted] == 0 || got[codes.Unauthenticated]+got[codes.ResourceExhausted] != 60 {
		t.Fatalf("60 wrong passwords: %v; want UNAUTHENTICATED and, past the burst, RESOURCE_EXHAUSTED", got)
	}
}
