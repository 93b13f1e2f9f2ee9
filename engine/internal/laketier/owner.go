package laketier

import (
	"sync"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Owner is what a lake table is the tier of: a table without partitions,
// or all the partitions of a partitioned table together (PROTOCOL.md §7.7):
// each partition is stored as a table of its own, but they share one
// Iceberg table, so one round at a time and one snapshot.
type Owner struct {
	tier *tier
	id   int64        // the table's id
	t    *table.Table // the table; nil for a partitioned table, which has none
}

// tiers are the owners' tiers by table id, made on first use; the zero
// value is ready.
type tiers struct {
	mu sync.Mutex
	m  map[int64]*tier // guarded by mu
}

// get returns the tier of id, made on first use with its first round a
// freshness after since.
func (ts *tiers) get(id int64, since time.Time) *tier {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.m == nil {
		ts.m = map[int64]*tier{}
	}
	tr := ts.m[id]
	if tr == nil {
		tr = newTier(since)
		ts.m[id] = tr
	}
	return tr
}

// existing returns the tier of id if it was made, else nil.
func (ts *tiers) existing(id int64) *tier {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.m[id]
}

func (ts *tiers) forget(id int64) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.m, id)
}

// OwnerOf returns the lake owner of t: t, or a partition's table. A table's
// first round comes a freshness after it was opened.
func (l *Lakes) OwnerOf(t *table.Table) Owner {
	info := t.Current().Info
	if p := info.Partition(); p != nil {
		return l.Partitioned(p.TableID)
	}
	if t.Dropped.Load() {
		// Its tier is forgotten (Drop) or about to be: no new one is kept.
		return Owner{tier: newTier(t.Opened), id: info.TableID, t: t}
	}
	return Owner{tier: l.tiers.get(info.TableID, t.Opened), id: info.TableID, t: t}
}

// Partitioned returns the lake owner of the partitioned table id. Its
// first round comes a freshness after its first use, as a table's comes a
// freshness after it is opened.
func (l *Lakes) Partitioned(id int64) Owner {
	return Owner{tier: l.tiers.get(id, time.Now()), id: id}
}

// ownerInfo is the owner's current definition; NOT_FOUND once it was
// dropped.
func (l *Lakes) ownerInfo(o Owner) (*catalog.TableInfo, error) {
	if o.t == nil {
		return l.env.Tables.Catalog().TableByID(o.id)
	}
	info := o.t.Current().Info
	if o.t.Dropped.Load() {
		return nil, errs.New(errs.NotFound, "table %s was dropped", info.Path())
	}
	return info, nil
}

// WaitRound waits for the round running of the lake owner that info's data
// is tiered by (its own, or a partitioned table's, for it or one of its
// partitions), whatever it takes, and holds off the next until unlock.
func (l *Lakes) WaitRound(info *catalog.TableInfo) (unlock func()) {
	round := l.roundOf(info)
	if round == nil {
		return func() {}
	}
	round.LockWait()
	return round.Unlock
}

// roundOf is the round lock of the lake owner that info's data is tiered
// by; nil when it has no tier: no round runs, and none that starts later
// finds the dropped table or partition.
func (l *Lakes) roundOf(info *catalog.TableInfo) ctxMutex {
	id := info.TableID
	if p := info.Partition(); p != nil {
		id = p.TableID
	}
	if tr := l.tiers.existing(id); tr != nil {
		return tr.round
	}
	return nil
}

// Resolve parses a table name and returns its lake owner and definition.
func (l *Lakes) Resolve(name string) (Owner, *catalog.TableInfo, protocol.TablePath, error) {
	info, path, err := l.env.Tables.Info(name)
	if err != nil {
		return Owner{}, nil, path, err
	}
	if info.IsPartitioned() {
		return l.Partitioned(info.TableID), info, path, nil
	}
	t, err := l.env.Tables.Table(info)
	if err != nil {
		return Owner{}, nil, path, err
	}
	return l.OwnerOf(t), info, path, nil
}

// Owners are the owners of the lake-enabled tables: the open tables
// without partitions and the partitioned tables.
func (l *Lakes) Owners() []Owner {
	var out []Owner
	for _, t := range l.env.Tables.All() {
		if info := t.Current().Info; info.DatalakeEnabled() && info.Partition() == nil && !t.Dropped.Load() {
			out = append(out, l.OwnerOf(t))
		}
	}
	infos, err := l.env.Tables.Catalog().ListTables("")
	if err != nil {
		return out
	}
	for _, info := range infos {
		if info.IsPartitioned() && info.DatalakeEnabled() {
			out = append(out, l.Partitioned(info.TableID))
		}
	}
	return out
}
