package engine

import (
	"context"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Row counts without reading rows (table-stats, COUNT(*) pushdown).
//
// A log table's rows are its retained log: every row takes one offset, so a
// bucket holds its high watermark minus its earliest offset.
//
// A primary-key table keeps a row count per bucket in the kv store, changed
// in the pebble batch that changes the bucket's rows and applied offset
// (kv.Txn.CountRows): a write counts the keys it adds and removes from the
// stored rows it reads anyway, and a replay of the changelog (on open, after
// a failed write, after the store was reopened) reads whether each key it
// applies was there. Undo is a write. So the count is of exactly the rows
// the state holds, across crashes. A table from before counts were kept is
// counted once when it opens. A lake-enabled table's state holds every
// current row too, tiered or not, so its count is served as well (Fluss
// serves none for those).
//
// A WAL-image table keeps no count (table.KeepsRowCount), as in Fluss: its
// whole-row upserts do not read the stored row (merge.Write.NeedsOld), so a
// write does not know whether its key is new, and reading it for the count
// alone would take the WAL image's saving away.

// TableStats answers table-stats: the table's rows, per bucket and in all;
// of a partitioned table, per partition asked (all by default).
func (e *Engine) TableStats(ctx context.Context, req protocol.TableStatsRequest) (protocol.TableStats, error) {
	info, path, err := e.tables.Info(req.Table)
	if err != nil {
		return protocol.TableStats{}, err
	}
	if path.View != "" {
		return protocol.TableStats{}, errs.New(errs.FailedPrecondition, "table-stats of %s: a view has no row count; ask for %s", path.FullName(), info.Path())
	}
	if !info.IsPartitioned() {
		if len(req.Partitions) > 0 {
			return protocol.TableStats{}, catalog.NotPartitioned(info)
		}
		t, err := e.tables.Table(info)
		if err != nil {
			return protocol.TableStats{}, err
		}
		s, err := e.rowCounts(t)
		return protocol.TableStats{RowCount: s.RowCount, Buckets: s.Buckets}, err
	}
	parts, err := e.tables.Partitions(info, req.Partitions)
	if err != nil {
		return protocol.TableStats{}, err
	}
	out := protocol.TableStats{Partitions: make(map[string]protocol.PartitionStats, len(parts))}
	for _, p := range parts {
		t, err := e.tables.Partition(p.PartitionID)
		if err != nil {
			return protocol.TableStats{}, err
		}
		s, err := e.rowCounts(t)
		if err != nil {
			return protocol.TableStats{}, err
		}
		out.Partitions[p.PartitionName] = s
		out.RowCount += s.RowCount
	}
	return out, nil
}

// rowCounts counts the rows of a table (or of one partition) per bucket.
func (e *Engine) rowCounts(t *table.Table) (protocol.PartitionStats, error) {
	info := t.Current().Info
	var count func(bucket int) (int64, error)
	switch {
	case info.IsPrimaryKey() && !table.KeepsRowCount(info):
		return protocol.PartitionStats{}, errs.New(errs.FailedPrecondition, "table-stats of %s: a table with %s = %s keeps no row count (its upserts do not read whether the key exists)", info.Path(), catalog.OptChangelogImage, catalog.ChangelogWAL)
	case info.IsPrimaryKey():
		count = func(b int) (int64, error) {
			n, _, err := e.kv.RowCount(info.TableID, b) // none yet: no write has committed
			return n, err
		}
	case info.DatalakeEnabled():
		return protocol.PartitionStats{}, errs.New(errs.FailedPrecondition, "table-stats of %s: a lake-enabled log table's rows are its lake's and its log's, and tiered rows may have left the log; read it to count them", info.Path())
	default:
		count = func(b int) (int64, error) { return t.Log.HighWatermark(b) - t.Log.EarliestOffset(b), nil }
	}
	out := protocol.PartitionStats{Buckets: make(map[int]int64, info.BucketCount())}
	for b := range info.BucketCount() {
		n, err := count(b)
		if err != nil {
			return protocol.PartitionStats{}, err
		}
		out.Buckets[b] = n
		out.RowCount += n
	}
	return out, nil
}
