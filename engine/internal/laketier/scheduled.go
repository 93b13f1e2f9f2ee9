package laketier

import (
	"context"
	"math"
	"time"

	"github.com/fluxgate-io/fluxgate/tiering"
)

// Scheduled is o as the tiering scheduler sees it.
func (l *Lakes) Scheduled(o Owner) tiering.Tiered { return scheduled{l, o} }

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
