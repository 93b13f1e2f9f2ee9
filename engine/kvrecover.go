package engine

import (
	"cmp"
	"slices"

	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/kv"
)

// recoverKV reopens the broken state store once its disk works, as a
// restart would: with every primary-key table's writes quiesced, the store
// is closed and opened again from its files, and each table's changelog is
// replayed into it from its buckets' applied offsets. A table whose replay
// fails refuses writes, and its next write tries again (pkwrite.Env.Recover). The
// tables' auto-increment allocators are kept: their reservations are synced
// before any id is handed out, so no id is issued twice.
func (e *Engine) recoverKV() error {
	e.kvRecovery.Lock()
	defer e.kvRecovery.Unlock()
	if !e.kv.Broken() {
		return nil // another write recovered it meanwhile
	}
	e.mu.RLock()
	var tables []*table.Table
	for _, t := range e.tables {
		if t.PK != nil {
			tables = append(tables, t)
		}
	}
	e.mu.RUnlock()
	slices.SortFunc(tables, func(a, b *table.Table) int { return cmp.Compare(a.Current().Info.TableID, b.Current().Info.TableID) })
	for _, t := range tables {
		defer t.PK.Quiesce()()
	}
	return e.kv.Reopen(func(store *kv.Store) {
		for _, t := range tables {
			if err := e.pkw.Replay(store, t); err != nil {
				t.PK.InFlight.Fail(err)
				e.opts.Logger.Error("replay the changelog into the reopened primary-key state", "table", t.Current().Info.Path().String(), "err", err.Error())
			}
		}
	})
}
