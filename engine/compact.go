package engine

import (
	"context"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Lake compaction: the compact-lake action and the compactions the tiering
// scheduler runs every LakeCompactionInterval per table.

// CompactLake compacts a table's lake at once (the compact-lake action).
func (e *Engine) CompactLake(ctx context.Context, name string) (protocol.LakeCompaction, error) {
	o, info, path, err := e.lakes.Resolve(name)
	if err != nil {
		return protocol.LakeCompaction{}, err
	}
	if path.View != "" {
		return protocol.LakeCompaction{}, errs.New(errs.Invalid, "compact-lake names a table, not the view %s", path.FullName())
	}
	if !info.DatalakeEnabled() {
		return protocol.LakeCompaction{}, errs.New(errs.Precondition, "%s is not datalake enabled: set %s to true first", path, catalog.OptDatalakeEnabled)
	}
	st, err := e.lakes.Compact(ctx, o)
	if err == nil && st.Snapshot == nil {
		err = laketier.NoSnapshot(info, path)
	}
	if err != nil {
		return protocol.LakeCompaction{}, err
	}
	return protocol.LakeCompaction{LakeSnapshot: laketier.SnapshotOf(st.Snapshot), RewrittenFiles: st.RewrittenFiles, AddedFiles: st.AddedFiles,
		RemovedDeleteFiles: st.RemovedDeleteFiles, OrphansDeleted: st.OrphansDeleted}, nil
}
