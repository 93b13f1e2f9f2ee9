package conformance_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
)

// deepMaxRSSKiB bounds the server's peak RSS while it refuses deeply nested
// filters: what it holds at start and then some, far below what the
// filters once cost (their duplicate-key check was quadratic in the depth:
// 120 KB of nesting took gigabytes).
const deepMaxRSSKiB = 256 << 10

// TestDeepFiltersMemoryBounded sends deeply nested filters, several at once:
// each is refused with INVALID_ARGUMENT, and the server's peak RSS stays
// bounded.
func TestDeepFiltersMemoryBounded(t *testing.T) {
	srv := startServer(t)
	ctx := testContext(t, time.Minute)
	c, err := client.Dial(ctx, srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const depth = 17_000 // 120 KB
	cmd := []byte(`{"scan":{"table":"t","filter":` + strings.Repeat(`{"not":`, depth) + `{"is_null":"a"}` + strings.Repeat(`}`, depth) + `}}`)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = c.Flight().GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
		})
	}
	wg.Wait()
	rss, err := peakRSSKiB(srv.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak RSS %d KiB", rss)
	if rss > deepMaxRSSKiB {
		t.Errorf("peak RSS %d KiB while refusing deep filters, over %d KiB", rss, deepMaxRSSKiB)
	}
	for _, err := range errs {
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "nested deeper than") {
			t.Errorf("a filter nested %d deep: %v, want INVALID_ARGUMENT about its nesting", depth, err)
		}
	}
}
