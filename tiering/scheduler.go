package tiering

import (
	"context"
	"time"
)

// Tiered is a table the scheduler tiers. Values must be comparable, and
// equal (==) for the same table on every call of the tables callback: the
// scheduler tells the table being compacted by them.
type Tiered interface {
	// Freshness is how long after its last round's start the next is due.
	Freshness() time.Duration
	// LastRound is when its last round started.
	LastRound() time.Time
	// Round runs one round; it reports its own failures.
	Round(ctx context.Context)
	// Idle is called on ticks when no round is due.
	Idle(ctx context.Context)
	// CompactionDue reports whether the table's lake is due a compaction,
	// asked after each of its rounds.
	CompactionDue() bool
	// Compact compacts the table's lake; it reports its own failures.
	Compact(ctx context.Context)
}

// Schedule runs rounds until ctx is done: every interval it runs, one after
// another, the round of each table whose freshness has passed since its last
// round started. A round that fails is retried when it is next due.
//
// Compactions run beside the rounds, on one worker: a table due a
// compaction after its round is compacted there if the worker is free (else
// after a later round), so that a long compaction of one table delays no
// other table's rounds, and no more than one compaction takes a core. The
// compacted table's own rounds wait for the compaction to end; Schedule
// waits for it too before it returns.
func Schedule(ctx context.Context, interval time.Duration, tables func() []Tiered) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	schedule(ctx, tick.C, time.Now, tables)
}

// schedule is Schedule on the given ticks and clock.
func schedule(ctx context.Context, ticks <-chan time.Time, now func() time.Time, tables func() []Tiered) {
	var compacting Tiered // the table on the worker, nil when it is free
	compacted := make(chan struct{}, 1)
	defer func() {
		if compacting != nil {
			<-compacted
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-compacted:
			compacting = nil
			continue
		case <-ticks:
		}
		for _, t := range tables() {
			switch {
			case t == compacting:
				// Its round waits for its compaction; it is due still after.
			case now().Sub(t.LastRound()) >= t.Freshness():
				t.Round(ctx)
				if compacting == nil && t.CompactionDue() {
					compacting = t
					go func() {
						t.Compact(ctx)
						compacted <- struct{}{}
					}()
				}
			default:
				t.Idle(ctx)
			}
			if ctx.Err() != nil {
				return
			}
		}
	}
}
