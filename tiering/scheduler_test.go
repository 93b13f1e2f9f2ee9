package tiering

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTiered is a table whose rounds start at the test's clock. With
// compact set, it is due one compaction, which tells started that it runs
// and then waits for release.
type fakeTiered struct {
	now       func() time.Time
	freshness time.Duration
	last      time.Time
	rounds    atomic.Int32 // read by the test while the schedule runs
	idles     int

	compact          bool
	started, release chan struct{}
	compactions      atomic.Int32
}

func (f *fakeTiered) Freshness() time.Duration { return f.freshness }
func (f *fakeTiered) LastRound() time.Time     { return f.last }
func (f *fakeTiered) Round(context.Context)    { f.last = f.now(); f.rounds.Add(1) }
func (f *fakeTiered) Idle(context.Context)     { f.idles++ }
func (f *fakeTiered) CompactionDue() bool      { return f.compact && f.compactions.Load() == 0 }

func (f *fakeTiered) Compact(context.Context) {
	f.compactions.Add(1)
	f.started <- struct{}{}
	<-f.release
}

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
	if fast.rounds.Load() != 6 || fast.idles != 49 {
		t.Errorf("a table with freshness 100ms had %d rounds and %d idle ticks in 550ms of ticks every 10ms, want 6 and 49", fast.rounds.Load(), fast.idles)
	}
	if slow.rounds.Load() != 0 || slow.idles != 55 {
		t.Errorf("a table with freshness 1h had %d rounds and %d idle ticks, want none and 55", slow.rounds.Load(), slow.idles)
	}
}

// A compaction runs on its own worker: while table a's compaction is held,
// table b's rounds go on; a's rounds wait for it, and b's compaction waits
// for the worker. Cancelled, the schedule returns once the compaction ends.
func TestCompactionDoesNotDelayOtherRounds(t *testing.T) {
	var clock atomic.Int64 // unix seconds, moved by the test while the schedule runs
	clock.Store(1_700_000_000)
	now := func() time.Time { return time.Unix(clock.Load(), 0) }
	newTable := func() *fakeTiered {
		return &fakeTiered{now: now, freshness: time.Minute, last: now(), compact: true,
			started: make(chan struct{}), release: make(chan struct{})}
	}
	a, b := newTable(), newTable()
	ticks := make(chan time.Time) // unbuffered: a tick sent is one the schedule finished the last of
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		schedule(ctx, ticks, now, func() []Tiered { return []Tiered{a, b} })
	}()
	tick := func() { // advances the clock by a freshness and lets the schedule finish that tick
		clock.Add(60)
		ticks <- now()
		ticks <- now() // received once the schedule finished the last tick; due nothing new
	}

	clock.Add(60)
	ticks <- now() // a's round, a's compaction starts, b's round
	<-a.started
	for range 3 {
		tick()
	}
	if a.rounds.Load() != 1 || b.rounds.Load() != 4 {
		t.Errorf("while a's compaction is held: a had %d rounds and b %d, want 1 and 4", a.rounds.Load(), b.rounds.Load())
	}
	if n := b.compactions.Load(); n != 0 {
		t.Errorf("b was compacted %d times while a's compaction held the worker, want 0", n)
	}

	close(a.release)
	deadline := time.Now().Add(10 * time.Second)
	for a.rounds.Load() == 1 { // a's next tick after its compaction ended
		if time.Now().After(deadline) {
			t.Fatal("a had no round within 10s of its compaction's end")
		}
		tick()
	}
	// b, due since its first round, is compacted after its next round.
	for b.compactions.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("b was not compacted within 10s of a's compaction's end")
		}
		tick()
	}
	<-b.started
	cancel()
	close(b.release)
	<-returned
}
