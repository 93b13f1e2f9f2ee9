package engine

import (
	"fmt"
	"sync"
	"testing"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// TestConcurrentWritersCreateOnePartition has several writers create the
// same new partition at once, round after round. A partition is in the
// catalog a moment before it is open, and a writer finding it there then
// must wait for it rather than fail NOT_FOUND on its table id.
func TestConcurrentWritersCreateOnePartition(t *testing.T) {
	const writers, rounds, perWriter = 4, 20, 3
	e := openPartitioned(t, t.TempDir(), Options{})
	if _, err := e.CreateTable(t.Context(), eventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	info, err := e.cat.Table(protocol.TablePath{Database: "fluss", Table: "events"})
	if err != nil {
		t.Fatal(err)
	}
	for r := range rounds {
		day := fmt.Sprintf("2026%04d", 101+r)
		start := make(chan struct{})
		errc := make(chan error, writers)
		var wg sync.WaitGroup
		for w := range writers {
			ids := make([]int64, perWriter)
			days := make([]string, perWriter)
			for i := range ids {
				ids[i], days[i] = int64(w*perWriter+i), day
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows(ids, days))
				errc <- err
			}()
		}
		close(start)
		wg.Wait()
		close(errc)
		for err := range errc {
			if err != nil {
				t.Fatalf("round %d: a writer creating partition %s failed: %v", r, day, err)
			}
		}
		if got := partitionRows(t, e, info, day); got != writers*perWriter {
			t.Fatalf("round %d: partition %s holds %d rows, want %d", r, day, got, writers*perWriter)
		}
	}
}
