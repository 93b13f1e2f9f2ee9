package laketier

import (
	"sync"

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
	Tier *table.Tier
	id   int64        // the table's id
	t    *table.Table // the table; nil for a partitioned table, which has none
}

// partTiers are the lake tiers of partitioned tables, by table id, made on
// first use; the zero value is ready.
type partTiers struct {
	mu sync.Mutex
	m  map[int64]*table.Tier
}

func (p *partTiers) tier(id int64) *table.Tier {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[int64]*table.Tier{}
	}
	t := p.m[id]
	if t == nil {
		// The first round comes a freshness after first use, as a table's
		// comes a freshness after it is opened.
		t = table.NewTier()
		p.m[id] = t
	}
	return t
}

// existing returns the tier of id if it was made, else nil.
func (p *partTiers) existing(id int64) *table.Tier {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[id]
}

func (p *partTiers) forget(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, id)
}

// OwnerOf returns the lake owner of t: t, or a partition's table.
func (l *Lakes) OwnerOf(t *table.Table) Owner {
	info := t.Current().Info
	if p := info.Partition(); p != nil {
		return l.Partitioned(p.TableID)
	}
	return Owner{Tier: &t.Tier, id: info.TableID, t: t}
}

// Partitioned returns the lake owner of the partitioned table id.
func (l *Lakes) Partitioned(id int64) Owner {
	return Owner{Tier: l.parts.tier(id), id: id}
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

// RoundOf is the round lock of the lake owner that info's data is tiered
// by: t's own (t may be nil: not open), or a partitioned table's, for it or
// one of its partitions; nil when there is none. A partitioned table
// without a tier has no round running, and none that starts later finds
// the dropped table or partition.
func (l *Lakes) RoundOf(info *catalog.TableInfo, t *table.Table) table.CtxMutex {
	id := info.TableID
	switch p := info.Partition(); {
	case p != nil:
		id = p.TableID
	case !info.IsPartitioned():
		if t == nil {
			return nil
		}
		return t.Tier.Round
	}
	if tier := l.parts.existing(id); tier != nil {
		return tier.Round
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
