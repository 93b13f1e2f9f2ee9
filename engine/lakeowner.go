package engine

import (
	"sync"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A lake table is the tier of a table without partitions, or of all the
// partitions of a partitioned table together (PROTOCOL.md §7.7): each
// partition is stored as a table of its own, but they share one Iceberg
// table, so one round at a time and one snapshot. lakeOwner is that unit.
type lakeOwner struct {
	tier *table.Tier
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

// ownerOf returns the lake owner of t: t, or a partition's table.
func (e *Engine) ownerOf(t *table.Table) lakeOwner {
	info := t.Current().Info
	if p := info.Partition(); p != nil {
		return lakeOwner{tier: e.lakeParts.tier(p.TableID), id: p.TableID}
	}
	return lakeOwner{tier: &t.Tier, id: info.TableID, t: t}
}

// ownerInfo is the owner's current definition; NOT_FOUND once it was
// dropped.
func (e *Engine) ownerInfo(o lakeOwner) (*catalog.TableInfo, error) {
	if o.t == nil {
		return e.cat.TableByID(o.id)
	}
	info := o.t.Current().Info
	if o.t.Dropped.Load() {
		return nil, errs.New(errs.NotFound, "table %s was dropped", info.Path())
	}
	return info, nil
}

// resolveLake parses a table name and returns its lake owner and
// definition.
func (e *Engine) resolveLake(name string) (lakeOwner, *catalog.TableInfo, protocol.TablePath, error) {
	path, err := protocol.ParseTablePath(name)
	if err != nil {
		return lakeOwner{}, nil, path, err
	}
	info, err := e.cat.Table(protocol.TablePath{Database: path.Database, Table: path.Table})
	if err != nil {
		return lakeOwner{}, nil, path, err
	}
	if info.IsPartitioned() {
		return lakeOwner{tier: e.lakeParts.tier(info.TableID), id: info.TableID}, info, path, nil
	}
	t, err := e.table(info)
	if err != nil {
		return lakeOwner{}, nil, path, err
	}
	return e.ownerOf(t), info, path, nil
}

// lakeOwners are the owners of the lake-enabled tables: the open tables
// without partitions and the partitioned tables.
func (e *Engine) lakeOwners() []lakeOwner {
	var out []lakeOwner
	for _, t := range e.openTables() {
		if info := t.Current().Info; info.DatalakeEnabled() && info.Partition() == nil && !t.Dropped.Load() {
			out = append(out, e.ownerOf(t))
		}
	}
	infos, err := e.cat.ListTables("")
	if err != nil {
		return out
	}
	for _, info := range infos {
		if info.IsPartitioned() && info.DatalakeEnabled() {
			out = append(out, lakeOwner{tier: e.lakeParts.tier(info.TableID), id: info.TableID})
		}
	}
	return out
}

// lakeRoundOf is the round lock of the lake owner that info's data is
// tiered by: t's own (t may be nil: not open), or a partitioned table's,
// for it or one of its partitions; nil when there is none. A partitioned
// table without a tier has no round running, and none that starts later
// finds the dropped table or partition.
func (e *Engine) lakeRoundOf(info *catalog.TableInfo, t *table.Table) table.CtxMutex {
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
	if tier := e.lakeParts.existing(id); tier != nil {
		return tier.Round
	}
	return nil
}
