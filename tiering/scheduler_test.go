package tiering

import (
	"context"
	"testing"
	"time"
)

// fakeTiered is a table whose rounds start at the test's clock.
type fakeTiered struct {
	now       func() time.Time
	freshness time.Duration
	last      time.Time
	rounds    int
	idles     int
}

func (f *fakeTiered) Freshness() time.Duration { return f.freshness }
func (f *fakeTiered) LastRound() time.Time     { return f.last }
func (f *fakeTiered) Round(context.Context)    { f.last = f.now(); f.rounds++ }
func (f *fakeTiered) Idle(context.Context)     { f.idles++ }

// A table is tiered once per freshness, not once per tick; a table whose
// freshness has not passed is only offered Idle.
func TestScheduleRunsDueRounds(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	clock := start
	now := func() time.Time { return clock }
	fast := &fakeTiered{now: now, freshness: 100 * time.Millisecond}
	slow := &fakeTiered{now: now, freshness: time.Hour, last: start}
	// 55 ticks 10 ms apart; the ticks channel is always ready, and the
	// tables callback moves the clock and ends the schedule after the last.
	ticks := make(chan time.Time)
	close(ticks)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	schedule(ctx, ticks, now, func() []Tiered {
		if n == 55 {
			cancel()
			return nil
		}
		n++
		clock = clock.Add(10 * time.Millisecond)
		return []Tiered{fast, slow}
	})
	// Rounds at 10, 110, 210, 310, 410 and 510 ms.
	if fast.rounds != 6 || fast.idles != 49 {
		t.Errorf("a table with freshness 100ms had %d rounds and %d idle ticks in 550ms of ticks every 10ms, want 6 and 49", fast.rounds, fast.idles)
	}
	if slow.rounds != 0 || slow.idles != 55 {
		t.Errorf("a table with freshness 1h had %d rounds and %d idle ticks, want none and 55", slow.rounds, slow.idles)
	}
}
