package laketier

import (
	"context"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// The lake actions of a table named by a client (the engine's LakeSnapshot,
// TierNow, CompactLake, and LakeTable and LakeTableNames for the served
// Iceberg catalog): the name resolved to its lake owner, then the action.

// LakeSnapshot returns the latest lake snapshot of a table (the
// lake-snapshot action): NOT_FOUND before the first commit.
func (l *Lakes) LakeSnapshot(ctx context.Context, name string) (protocol.LakeSnapshot, error) {
	o, info, path, err := l.Resolve(name)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	snap, err := l.OwnerSnapshot(ctx, o, info)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	failure := l.RoundFailure(o)
	if snap == nil {
		if failure != nil {
			return protocol.LakeSnapshot{}, errs.New(errs.NotFound, "%s has no lake snapshot yet: its tiering rounds fail since %s: %s",
				path.FullName(), time.UnixMilli(failure.Since).UTC().Format(time.RFC3339), failure.Message)
		}
		return protocol.LakeSnapshot{}, NoSnapshot(info, path)
	}
	out := SnapshotOf(snap)
	out.RoundFailure = failure
	return out, nil
}

// TierNow runs one tiering round of a table at once (the tier-now action)
// and returns the latest lake snapshot after it.
func (l *Lakes) TierNow(ctx context.Context, name string) (protocol.LakeSnapshot, error) {
	o, info, path, err := l.resolveEnabled(name, "tier-now")
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	res, err := l.Round(ctx, o)
	if err != nil {
		return protocol.LakeSnapshot{}, err
	}
	if res.Snapshot == nil {
		return protocol.LakeSnapshot{}, NoSnapshot(info, path)
	}
	return SnapshotOf(res.Snapshot), nil
}

// CompactNow compacts a table's lake at once (the compact-lake action).
func (l *Lakes) CompactNow(ctx context.Context, name string) (protocol.LakeCompaction, error) {
	o, info, path, err := l.resolveEnabled(name, "compact-lake")
	if err != nil {
		return protocol.LakeCompaction{}, err
	}
	st, err := l.Compact(ctx, o)
	if err == nil && st.Snapshot == nil {
		err = NoSnapshot(info, path)
	}
	if err != nil {
		return protocol.LakeCompaction{}, err
	}
	return protocol.LakeCompaction{LakeSnapshot: SnapshotOf(st.Snapshot), RewrittenFiles: st.RewrittenFiles, AddedFiles: st.AddedFiles,
		RemovedDeleteFiles: st.RemovedDeleteFiles, OrphansDeleted: st.OrphansDeleted}, nil
}

// resolveEnabled resolves the table an action names, which must be a
// lake-enabled table, not a view.
func (l *Lakes) resolveEnabled(name, action string) (Owner, *catalog.TableInfo, protocol.TablePath, error) {
	o, info, path, err := l.Resolve(name)
	if err != nil {
		return o, info, path, err
	}
	if path.View != "" {
		return o, info, path, errs.New(errs.InvalidArgument, "%s names a table, not the view %s", action, path.FullName())
	}
	if !info.DatalakeEnabled() {
		return o, info, path, errs.New(errs.FailedPrecondition, "%s is not datalake enabled: set %s to true first", path, catalog.OptDatalakeEnabled)
	}
	return o, info, path, nil
}

// ServedTable returns the Iceberg table of a lake-enabled table, opening it
// if this server has not yet, for readers outside fluxgate (the served
// Iceberg catalog). A table that is not lake enabled is NOT_FOUND: its
// Iceberg table, if one is left, is no longer kept up to date.
func (l *Lakes) ServedTable(ctx context.Context, name string) (*lake.Table, error) {
	o, info, path, err := l.Resolve(name)
	if err != nil {
		return nil, err
	}
	if path.View != "" {
		return nil, errs.New(errs.NotFound, "%s is a view, not a lake table", path.FullName())
	}
	if !info.DatalakeEnabled() {
		return nil, errs.New(errs.NotFound, "%s is not datalake enabled (%s is not true)", path, catalog.OptDatalakeEnabled)
	}
	return l.OwnerTable(ctx, o, info)
}

// ServedTableNames lists the names of a database's lake-enabled tables, the
// tables of the served Iceberg catalog; it is NOT_FOUND for a database that
// does not exist.
func (l *Lakes) ServedTableNames(database string) ([]string, error) {
	infos, err := l.env.Tables.Catalog().ListTables(database)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, info := range infos {
		if info.DatalakeEnabled() {
			names = append(names, info.Path().Table)
		}
	}
	return names, nil
}
