package engine

import (
	"context"
	"time"

	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// newLakes builds the engine's lake tier (internal/laketier) over its lake,
// state, catalog and open tables.
func (e *Engine) newLakes() *laketier.Lakes {
	return laketier.New(laketier.Env{
		Lake: e.lake, KV: e.kv, Alloc: e.opts.Allocator, Logger: e.opts.Logger,
		Metrics: laketier.Metrics{RoundSeconds: e.met.lakeRoundSeconds, Files: e.met.lakeFiles,
			Bytes: e.met.lakeBytes, Rows: e.met.lakeRows, RoundFailures: e.met.lakeRoundFailures, Table: tableAttr},
		CompactionInterval: e.opts.LakeCompactionInterval,
		Tables:             e.tables,
	})
}

// LakeSnapshot returns the latest lake snapshot of a table (the
// lake-snapshot action): NOT_FOUND before the first commit.
func (e *Engine) LakeSnapshot(ctx context.Context, name string) (protocol.LakeSnapshot, error) {
	o, info, path, err := e.lakes.Resolve(name)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	snap, err := e.lakes.OwnerSnapshot(ctx, o, info)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	failure := e.lakes.RoundFailure(o)
	if snap == nil {
		if failure != nil {
			return protocol.LakeSnapshot{}, errs.New(errs.NotFound, "%s has no lake snapshot yet: its tiering rounds fail since %s: %s",
				path.FullName(), time.UnixMilli(failure.Since).UTC().Format(time.RFC3339), failure.Message)
		}
		return protocol.LakeSnapshot{}, laketier.NoSnapshot(info, path)
	}
	out := laketier.SnapshotOf(snap)
	out.RoundFailure = failure
	return out, nil
}
