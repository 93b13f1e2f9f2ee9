package laketier

import (
	"sync"
	"time"

	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// tier is a lake owner's place in the lake (owner.go): its Iceberg table,
// opened on first use, and the tiering rounds' bookkeeping. Its fields are
// read and changed only through its methods, under mu.
type tier struct {
	// round is held for a whole round or compaction (one at a time per
	// owner), and opening while the lake table is opened (one opening at a
	// time). Both are held across lake calls, so a caller waits for them
	// under its context; mu is never held across one.
	round, opening ctxMutex

	mu             sync.Mutex
	lake           *lake.Table    // guarded by mu
	lakeSchema     int32          // the table schema id lake maps; guarded by mu
	snap           *lake.Snapshot // the latest committed snapshot, nil before the first; guarded by mu
	lastRound      time.Time      // start of the last round, finished or not; guarded by mu
	caughtUp       time.Time      // start of the last round that succeeded: the lake holds all written before it; guarded by mu
	lastCompaction time.Time      // start of the last compaction, or when the scheduler first saw the table; guarded by mu
	// failing is why the last round failed, nil after one that succeeded,
	// and failingSince when the rounds began to fail; guarded by mu.
	failing      error
	failingSince time.Time
}

// newTier returns a tier whose first round comes a freshness after since.
func newTier(since time.Time) *tier {
	return &tier{round: newCtxMutex(), opening: newCtxMutex(), lastRound: since}
}

// opened reports whether the lake table has been opened.
func (tr *tier) opened() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.lake != nil
}

// table returns the open lake table if it maps schema, else nil.
func (tr *tier) table(schema int32) *lake.Table {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.lake != nil && tr.lakeSchema == schema {
		return tr.lake
	}
	return nil
}

// setTable records the lake table opened for schema; snap, its current
// snapshot, only at the first opening: later ones (for a new schema) may
// race a round's commit, and rounds keep the snapshot current.
func (tr *tier) setTable(lt *lake.Table, schema int32, snap *lake.Snapshot) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.lake == nil {
		tr.snap = snap
	}
	tr.lake, tr.lakeSchema = lt, schema
}

// snapshot is the latest committed snapshot, nil before the first.
func (tr *tier) snapshot() *lake.Snapshot {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.snap
}

// lagSince is what the lag is measured from: the latest snapshot, whether
// the lake table is open (known), and when the lake last caught up.
func (tr *tier) lagSince() (snap *lake.Snapshot, known bool, caughtUp time.Time) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.snap, tr.lake != nil, tr.caughtUp
}

// lastRoundStart is when the last round started.
func (tr *tier) lastRoundStart() time.Time {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.lastRound
}

// roundStarted records the start of a round.
func (tr *tier) roundStarted(start time.Time) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.lastRound = start
}

// roundFailed records why the round that started at start failed.
func (tr *tier) roundFailed(start time.Time, err error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.failing == nil {
		tr.failingSince = start
	}
	tr.failing = err
}

// roundSucceeded records the snapshot of the round that started at start:
// the lake holds all that was written before it.
func (tr *tier) roundSucceeded(start time.Time, snap *lake.Snapshot) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.snap, tr.caughtUp = snap, start
	tr.failing, tr.failingSince = nil, time.Time{}
}

// failure says why the rounds fail and since when, nil after a round that
// succeeded.
func (tr *tier) failure() *protocol.RoundFailure {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.failing == nil {
		return nil
	}
	return &protocol.RoundFailure{Message: tr.failing.Error(), Since: tr.failingSince.UnixMilli()}
}

// compactionStarted records the start of a compaction.
func (tr *tier) compactionStarted(start time.Time) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.lastCompaction = start
}

// compacted records the snapshot a compaction committed.
func (tr *tier) compacted(snap *lake.Snapshot) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.snap = snap
}

// compactionDue reports whether the lake was last compacted (or first seen
// by the scheduler) at least interval ago.
func (tr *tier) compactionDue(interval time.Duration) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.lastCompaction.IsZero() {
		tr.lastCompaction = time.Now() // not at once after a restart
	}
	return time.Since(tr.lastCompaction) >= interval
}
