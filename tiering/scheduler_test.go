package tiering

import (
	"context"
	"sync"
	"testing"
	"time"
)

type fakeTiered struct {
	mu        sync.Mutex
	freshness time.Duration
	last      time.Time
	rounds    int
	idles     int
}

func (f *fakeTiered) Freshness() time.Duration { return f.freshness }
func (f *fakeTiered) LastRound() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}
func (f *fakeTiered) Round(context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = time.Now()
	f.rounds++
}
func (f *fakeTiered) Idle(context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.idles++
}

// A table is tiered once per freshness, not once per tick; a table whose
// freshness has not passed is only offered Idle.
func TestScheduleRunsDueRounds(t *testing.T) {
	fast := &fakeTiered{freshness: 100 * time.Millisecond}
	slow := &fakeTiered{freshness: time.Hour, last: time.Now()}
	ctx, cancel := context.WithTimeout(context.Background(), 550*time.Millisecond)
	defer cancel()
	Schedule(ctx, 10*time.Millisecond, func() []Tiered { return []Tiered{fast, slow} })
	if fast.rounds < 3 || fast.rounds > 6 {
		t.Errorf("a table with freshness 100ms had %d rounds in 550ms, want about 5", fast.rounds)
	}
	if slow.rounds != 0 || slow.idles < 10 {
		t.Errorf("a table with freshness 1h had %d rounds and %d idle ticks, want none and many", slow.rounds, slow.idles)
	}
}
