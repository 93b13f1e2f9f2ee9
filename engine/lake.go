package engine

import (
	"context"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
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
		TableByID:          e.cat.TableByID,
		Partitions:         e.cat.Partitions,
		Table:              e.table,
	})
}

// LakeSnapshot returns the latest lake snapshot of a table (the
// lake-snapshot action): NOT_FOUND before the first commit.
func (e *Engine) LakeSnapshot(ctx context.Context, name string) (protocol.LakeSnapshot, error) {
	o, info, path, err := e.resolveLake(name)
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

// resolveLake parses a table name and returns its lake owner and
// definition.
func (e *Engine) resolveLake(name string) (laketier.Owner, *catalog.TableInfo, protocol.TablePath, error) {
	path, err := protocol.ParseTablePath(name)
	if err != nil {
		return laketier.Owner{}, nil, path, err
	}
	info, err := e.cat.Table(protocol.TablePath{Database: path.Database, Table: path.Table})
	if err != nil {
		return laketier.Owner{}, nil, path, err
	}
	if info.IsPartitioned() {
		return e.lakes.Partitioned(info.TableID), info, path, nil
	}
	t, err := e.table(info)
	if err != nil {
		return laketier.Owner{}, nil, path, err
	}
	return e.lakes.OwnerOf(t), info, path, nil
}

// lakeOwners are the owners of the lake-enabled tables: the open tables
// without partitions and the partitioned tables.
func (e *Engine) lakeOwners() []laketier.Owner {
	var out []laketier.Owner
	for _, t := range e.openTables() {
		if info := t.Current().Info; info.DatalakeEnabled() && info.Partition() == nil && !t.Dropped.Load() {
			out = append(out, e.lakes.OwnerOf(t))
		}
	}
	infos, err := e.cat.ListTables("")
	if err != nil {
		return out
	}
	for _, info := range infos {
		if info.IsPartitioned() && info.DatalakeEnabled() {
			out = append(out, e.lakes.Partitioned(info.TableID))
		}
	}
	return out
}
