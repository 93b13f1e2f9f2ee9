package conformance

// follow: an unbounded scan (PROTOCOL.md §4.3) sees rows written after it
// started within a second of their acknowledgement, sends empty heartbeat
// batches while idle, and ends when its context is cancelled.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
)

const (
	// followLatency is how soon after its acknowledgement a row must reach a
	// follower.
	followLatency = time.Second
	// heartbeatWithin is the protocol's 5 s heartbeat plus delivery slack.
	heartbeatWithin = 5*time.Second + 500*time.Millisecond
)

// arrival is one batch of a followed scan, when it came.
type arrival struct {
	at   time.Time
	meta client.BatchMeta
	ids  []int64
	err  error
}

func follow(ctx context.Context, env *Env) error {
	table := env.Table("follow")
	if _, err := createTable(ctx, env, simpleSpec(table, 2, true)); err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := env.Client.Scan(sctx, client.ScanRequest{Table: table, Stop: client.Unbounded})
	if err != nil {
		return fmt.Errorf("plan unbounded scan: %w", err)
	}
	defer s.Release()
	arrivals := make(chan arrival, 1024)
	ended := make(chan error, 1)
	go func() {
		defer close(arrivals)
		for s.Next() {
			a := arrival{at: time.Now(), meta: s.Meta()}
			if s.RecordBatch().NumRows() > 0 {
				a.ids, a.err = int64Column(s.RecordBatch(), "id")
			}
			arrivals <- a
		}
		ended <- s.Err()
	}()
	// Release only after the reading goroutine is done with s.
	defer func() {
		cancel()
		for range arrivals {
		}
	}()

	ends := map[int]int64{0: 0, 1: 0}
	lastData := map[int]time.Time{0: time.Now(), 1: time.Now()}
	for round := range int64(3) {
		ids := idRange(round*10, 10)
		res, err := writeIDs(ctx, env, client.WriteRequest{Table: table}, ids)
		if err != nil {
			return fmt.Errorf("write round %d: %w", round, err)
		}
		acked := time.Now()
		for b, end := range endOffsets(res...) {
			ends[b] = end
		}
		if err := awaitRows(arrivals, ids, acked, lastData); err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
	}
	if err := awaitHeartbeats(arrivals, ends, lastData); err != nil {
		return err
	}

	cancel()
	select {
	case err := <-ended:
		if err != nil && status.Code(err) != codes.Canceled && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("after cancelling the scan's context: the scan ended with %v, want a clean end or CANCELLED", err)
		}
	case <-time.After(2 * time.Second):
		return fmt.Errorf("the unbounded scan did not end within 2 s of its context being cancelled")
	}
	return nil
}

// awaitRows waits for ids, acknowledged at acked, to arrive within
// followLatency, and notes when each bucket last had data.
func awaitRows(arrivals <-chan arrival, ids []int64, acked time.Time, lastData map[int]time.Time) error {
	want := map[int64]bool{}
	for _, id := range ids {
		want[id] = true
	}
	deadline := time.NewTimer(time.Until(acked.Add(followLatency)))
	defer deadline.Stop()
	for len(want) > 0 {
		select {
		case a, ok := <-arrivals:
			if !ok {
				return fmt.Errorf("the unbounded scan ended while rows %v were awaited", keys(want))
			}
			if a.err != nil {
				return a.err
			}
			for _, id := range a.ids {
				if !want[id] {
					return fmt.Errorf("the follower received id %d, which is not among the rows awaited %v (read twice, or never written)", id, keys(want))
				}
				delete(want, id)
			}
			if len(a.ids) > 0 {
				lastData[a.meta.Bucket] = a.at
			}
		case <-deadline.C:
			return fmt.Errorf("rows %v did not reach the follower within %s of their acknowledgement", keys(want), followLatency)
		}
	}
	return nil
}

// awaitHeartbeats waits for an empty batch from every bucket while nothing is
// written, each within heartbeatWithin of the bucket's last data, carrying
// next = the bucket's end offset.
func awaitHeartbeats(arrivals <-chan arrival, ends map[int]int64, lastData map[int]time.Time) error {
	pending := map[int]bool{}
	var deadline time.Time
	for b := range ends {
		pending[b] = true
		if d := lastData[b].Add(heartbeatWithin); d.After(deadline) {
			deadline = d
		}
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for len(pending) > 0 {
		select {
		case a, ok := <-arrivals:
			if !ok {
				return fmt.Errorf("the unbounded scan ended while idle")
			}
			if len(a.ids) > 0 {
				return fmt.Errorf("idle follower received ids %v that nobody wrote", a.ids)
			}
			b := a.meta.Bucket
			if a.meta.Next != ends[b] {
				return fmt.Errorf("heartbeat of bucket %d: app_metadata next %d, want %d (the bucket's end offset)", b, a.meta.Next, ends[b])
			}
			if gap := a.at.Sub(lastData[b]); gap > heartbeatWithin {
				return fmt.Errorf("heartbeat of bucket %d came %s after its last data, want within 5 s", b, gap.Round(time.Millisecond))
			}
			delete(pending, b)
		case <-timer.C:
			return fmt.Errorf("no empty heartbeat batch from buckets %v within 5 s of idleness", keys(pending))
		}
	}
	return nil
}

func keys[K cmp.Ordered](m map[K]bool) []K { return slices.Sorted(maps.Keys(m)) }
