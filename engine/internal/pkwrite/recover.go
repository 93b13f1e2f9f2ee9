package pkwrite

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/kv"
)

// Recover lets a primary-key table whose write failed (its log's storage
// failed, or the commit of its state) take writes again without a restart:
// once no write is in flight it recovers the log from its fault and replays
// into the state the changelog that the state lacks, as on open. While the
// storage still fails, so does this, and the table goes on refusing writes.
func (env *Env) Recover(t *table.Table) error {
	unlock := t.PK.Quiesce()
	defer unlock()
	if t.PK.InFlight.Failed() == nil {
		return nil // another write recovered it meanwhile
	}
	if err := t.Log.Recover(); err != nil {
		return err
	}
	if err := t.Replay(env.KV, env.Logger); err != nil {
		return fmt.Errorf("recover %s: %w", t.Current().Info.Path(), err)
	}
	t.PK.InFlight.Reset()
	return nil
}

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
