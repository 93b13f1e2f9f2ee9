package pkwrite

import (
	"fmt"

	"github.com/fluxgate-io/fluxgate/engine/internal/table"
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
