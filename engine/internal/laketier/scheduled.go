package laketier

import (
	"context"
	"math"
	"time"

	"github.com/fluxgate-io/fluxgate/tiering"
)

// Schedule runs the tiering scheduler over the lake-enabled tables (Owners)
// every interval until ctx is done.
func (l *Lakes) Schedule(ctx context.Context, interval time.Duration) {
	tiering.Schedule(ctx, interval, func() []tiering.Tiered {
		var due []tiering.Tiered
		for _, o := range l.Owners() {
			due = append(due, scheduled{l, o})
		}
		return due
	})
}

// scheduled is an owner as the tiering scheduler sees it.
type scheduled struct {
	l *Lakes
	o Owner
}

func (s scheduled) Freshness() time.Duration {
	info, err := s.l.ownerInfo(s.o)
	if err != nil {
		return time.Duration(math.MaxInt64) // dropped: never due
	}
	return info.Freshness()
}

func (s scheduled) LastRound() time.Time { return s.o.tier.lastRoundStart() }

func (s scheduled) Round(ctx context.Context)   { s.l.Round(ctx, s.o) } // failures are logged
func (s scheduled) CompactionDue() bool         { return s.l.compactionDue(s.o) }
func (s scheduled) Compact(ctx context.Context) { s.l.Compact(ctx, s.o) } // failures are logged

// Idle opens the lake table early, so that its lag is known before its first
// round; a failure shows in the round.
func (s scheduled) Idle(ctx context.Context) {
	if info, err := s.l.ownerInfo(s.o); err == nil && !s.o.tier.opened() {
		s.l.open(ctx, s.o.tier, info)
	}
}
