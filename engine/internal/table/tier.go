package table

import (
	"sync"
	"time"

	"github.com/fluxgate-io/fluxgate/lake"
)

// Tier is a table's place in the lake: its Iceberg table, opened on first
// use, and the tiering rounds' bookkeeping. A partitioned table has one of
// its own, shared by its partitions (internal/laketier's owner.go).
type Tier struct {
	// Round is held for a whole round (one at a time per table), and
	// Opening while the lake table is opened (one opening at a time). Both
	// are held across lake calls, so a caller waits for them under its
	// context; Mu is never held across one.
	Round, Opening CtxMutex

	Mu             sync.Mutex
	Lake           *lake.Table    // guarded by Mu
	LakeSchema     int32          // the table schema id Lake maps; guarded by Mu
	Snap           *lake.Snapshot // the latest committed snapshot, nil before the first; guarded by Mu
	LastRound      time.Time      // start of the last round, finished or not; guarded by Mu
	CaughtUp       time.Time      // start of the last round that succeeded: the lake holds all written before it; guarded by Mu
	LastCompaction time.Time      // start of the last compaction, or when the scheduler first saw the table; guarded by Mu
	// Failing is why the last round failed, nil after one that succeeded,
	// and FailingSince when the rounds began to fail; guarded by Mu.
	Failing      error
	FailingSince time.Time
}

// NewTier returns a tier whose first round comes a freshness from now.
func NewTier() *Tier {
	t := &Tier{}
	t.init()
	return t
}

func (t *Tier) init() {
	t.Round, t.Opening = newCtxMutex(), newCtxMutex()
	t.LastRound = time.Now()
}

// Opened reports whether the lake table has been opened.
func (t *Tier) Opened() bool {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	return t.Lake != nil
}

// Table returns the open lake table if it maps schema, else nil.
func (t *Tier) Table(schema int32) *lake.Table {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	if t.Lake != nil && t.LakeSchema == schema {
		return t.Lake
	}
	return nil
}
