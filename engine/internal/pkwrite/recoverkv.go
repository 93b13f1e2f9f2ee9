package pkwrite

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
// fails refuses writes, and its next write tries again (Recover). The
// tables' auto-increment allocators are kept: their reservations are synced
// before any id is handed out, so no id is issued twice.
func (env *Env) recoverKV() error {
	env.kvRecovery.Lock()
	defer env.kvRecovery.Unlock()
	if !env.KV.Broken() {
		return nil // another write recovered it meanwhile
	}
	var pks []*table.Table
	for _, t := range env.Tables.All() {
		if t.PK != nil {
			pks = append(pks, t)
		}
	}
	slices.SortFunc(pks, func(a, b *table.Table) int { return cmp.Compare(a.Current().Info.TableID, b.Current().Info.TableID) })
	for _, t := range pks {
		defer t.PK.Quiesce()()
	}
	return env.KV.Reopen(func(store *kv.Store) {
		for _, t := range pks {
			if err := t.Replay(store, env.Logger); err != nil {
				t.PK.InFlight.Fail(err)
				env.Logger.Error("replay the changelog into the reopened primary-key state", "table", t.Current().Info.Path().String(), "err", err.Error())
			}
		}
	})
}
