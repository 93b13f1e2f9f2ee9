package tiering

import (
	"context"
	"time"
)

// Tiered is a table the scheduler tiers.
type Tiered interface {
	// Freshness is how long after its last round's start the next is due.
	Freshness() time.Duration
	// LastRound is when its last round started.
	LastRound() time.Time
	// Round runs one round; it reports its own failures.
	Round(ctx context.Context)
	// Idle is called on ticks when no round is due.
	Idle(ctx context.Context)
}

// Schedule runs rounds until ctx is done: every interval it runs, one after
// another, the round of each table whose freshness has passed since its last
// round started. A round that fails is retried when it is next due.
func Schedule(ctx context.Context, interval time.Duration, tables func() []Tiered) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	schedule(ctx, tick.C, time.Now, tables)
}

// schedule is Schedule on the given ticks and clock.
func schedule(ctx context.Context, ticks <-chan time.Time, now func() time.Time, tables func() []Tiered) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		for _, t := range tables() {
			if now().Sub(t.LastRound()) >= t.Freshness() {
				t.Round(ctx)
			} else {
				t.Idle(ctx)
			}
			if ctx.Err() != nil {
				return
			}
		}
	}
}
