package engine

import (
	"context"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/tiering"
)

// Tiering: tier-now and the scheduler over the lake-enabled tables; the
// rounds are internal/laketier's.

// TierNow runs one tiering round of a table at once (the tier-now action)
// and returns the latest lake snapshot after it.
func (e *Engine) TierNow(ctx context.Context, name string) (protocol.LakeSnapshot, error) {
	o, info, path, err := e.lakes.Resolve(name)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	if path.View != "" {
		return protocol.LakeSnapshot{}, errs.New(errs.Invalid, "tier-now names a table, not the view %s", path.FullName())
	}
	if !info.DatalakeEnabled() {
		return protocol.LakeSnapshot{}, errs.New(errs.Precondition, "%s is not datalake enabled: set %s to true first", path, catalog.OptDatalakeEnabled)
	}
	res, err := e.lakes.Round(ctx, o)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	if res.Snapshot == nil {
		return protocol.LakeSnapshot{}, laketier.NoSnapshot(info, path)
	}
	return laketier.SnapshotOf(res.Snapshot), nil
}

// tieringLoop runs the tiering scheduler over the lake-enabled tables.
func (e *Engine) tieringLoop() {
	defer e.wg.Done()
	tiering.Schedule(e.life, e.opts.TieringInterval, func() []tiering.Tiered {
		var due []tiering.Tiered
		for _, o := range e.lakes.Owners() {
			due = append(due, e.lakes.Scheduled(o))
		}
		return due
	})
}
