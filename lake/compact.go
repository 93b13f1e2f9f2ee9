package lake

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// DefaultCompactionTarget is the size compaction packs data files toward
// when the table does not say (table.datalake.compaction.target-file-size).
const DefaultCompactionTarget = 128 << 20

// DefaultOrphanAge is how old a file the table does not reference must be
// before maintenance deletes it: far longer than any round takes between
// writing its files and committing them.
const DefaultOrphanAge = 24 * time.Hour

// CompactOptions say how a compaction runs.
type CompactOptions struct {
	// TargetFileSize is the size small data files are packed toward; 0
	// means DefaultCompactionTarget.
	TargetFileSize int64
	// OrphanAge is how old an unreferenced file must be to be deleted; 0
	// means DefaultOrphanAge, negative deletes none.
	OrphanAge time.Duration
}

// CompactStats say what a compaction did.
type CompactStats struct {
	Snapshot                *Snapshot // the snapshot after it; nil for an empty lake
	Committed               bool      // whether it committed a replace
	RewrittenFiles          int       // data files read and replaced
	AddedFiles              int       // data files written
	RemovedDeleteFiles      int
	BytesBefore, BytesAfter int64
	OrphansDeleted          int
	// MaintenanceErr is why expiring snapshots or deleting orphan files
	// failed; the compaction itself stands.
	MaintenanceErr error
}

// Compact rewrites the current snapshot's small data files, and every data
// file that deletes apply to, per partition, into files of about the target
// size, with the deletes applied, and commits them as a replace that keeps
// the snapshot's offsets: readers see the same rows before and after. Files
// are packed in runs of consecutive offsets, so that a bucket's files still
// read in offset order. Then it expires old snapshots and deletes orphan
// files. Compactions and commits of a table are serialized by the caller.
func (t *Table) Compact(ctx context.Context, opts CompactOptions) (CompactStats, error) {
	var st CompactStats
	tbl := t.current()
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return st, nil
	}
	if _, err := snapshotOf(cur); err != nil {
		return st, err
	}
	target := cmp.Or(opts.TargetFileSize, DefaultCompactionTarget)
	scan := tbl.Scan(table.WithSnapshotID(cur.SnapshotID))
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return st, fmt.Errorf("plan lake compaction: %w", err)
	}
	groups, kept := planCompaction(tasks, target, t.m.fieldID(ColOffset))
	deadDeletes, err := t.deadDeletes(ctx, tbl, cur, kept)
	if err != nil {
		return st, err
	}
	if len(groups) > 0 || len(deadDeletes) > 0 {
		props := keptOffsets(cur)
		props[PropTableID], props[PropCommitUser] = cur.Summary.Properties[PropTableID], CommitUser
		tx := tbl.NewTransaction()
		if len(groups) > 0 {
			// Small manifests are merged first: a snapshot of its own,
			// without the offsets, that the rewrite's snapshot follows in
			// the same commit.
			if _, err := tx.RewriteManifests(ctx); err != nil {
				return st, fmt.Errorf("rewrite lake manifests: %w", err)
			}
			if err := t.rewrite(ctx, tbl, tx, groups, deadDeletes, props, target, &st); err != nil {
				return st, err
			}
		} else if err := tx.NewRowDelta(props).RemoveDeletes(deadDeletes...).Commit(ctx); err != nil {
			return st, fmt.Errorf("lake compaction: %w", err)
		}
		st.RemovedDeleteFiles = len(deadDeletes)
		if hook := t.lake.beforeCommit; hook != nil {
			if err := hook(); err != nil {
				return st, fmt.Errorf("lake compaction commit: %w", err)
			}
		}
		idx := t.idx
		t.idx = nil // until the commit stands and the index follows the rows
		if tbl, err = tx.Commit(ctx); err != nil {
			return st, fmt.Errorf("lake compaction commit: %w", err)
		}
		st.Committed = true
		t.setCurrent(tbl)
		if idx != nil && idx.snapshot == cur.SnapshotID {
			// A failure leaves the index to be loaded by the next commit.
			if err := idx.followRewrite(ctx, tbl, tasks, t.m.keyIDs); err == nil {
				t.idx = idx
			}
		}
	}
	if expired, err := expire(ctx, tbl); err != nil {
		st.MaintenanceErr = err
	} else {
		tbl = expired
		t.setCurrent(tbl)
	}
	if opts.OrphanAge >= 0 {
		res, err := tbl.DeleteOrphanFiles(ctx, table.WithFilesOlderThan(cmp.Or(opts.OrphanAge, DefaultOrphanAge)))
		if err != nil && st.MaintenanceErr == nil {
			st.MaintenanceErr = fmt.Errorf("delete orphan lake files: %w", err)
		}
		st.OrphansDeleted = len(res.DeletedFiles)
	}
	st.Snapshot, err = snapshotOf(tbl.CurrentSnapshot())
	return st, err
}

// rewrite stages the replace of groups' files by compacted ones, and the
// removal of the dead deletes, on tx: iceberg-go's RewriteDataFiles, with
// each new file recorded as the lake records files (recorded).
func (t *Table) rewrite(ctx context.Context, tbl *table.Table, tx *table.Transaction, groups []table.CompactionTaskGroup, deadDeletes []iceberg.DataFile, props iceberg.Properties, target int64, st *CompactStats) error {
	rw := tx.NewRewrite(props)
	staged := map[string]bool{}
	for _, g := range groups {
		// One reader keeps each group's rows in offset order.
		res, err := table.ExecuteCompactionGroup(ctx, tbl, g, table.WithCompactionTargetFileSize(target), table.WithCompactionScanConcurrency(1))
		if err != nil {
			return fmt.Errorf("lake compaction: %w", err)
		}
		for i, df := range res.NewDataFiles {
			if res.NewDataFiles[i], err = recorded(tbl, df); err != nil {
				return fmt.Errorf("lake compaction: %w", err)
			}
		}
		rw.ApplyResult(res)
		for _, df := range slices.Concat(res.SafePosDeletes, res.SafeDeletionVectors) {
			staged[df.FilePath()] = true
		}
		st.RewrittenFiles += len(res.OldDataFiles)
		st.AddedFiles += len(res.NewDataFiles)
		st.BytesBefore += res.BytesBefore
		st.BytesAfter += res.BytesAfter
	}
	for _, df := range deadDeletes {
		if !staged[df.FilePath()] { // a rewrite refuses to remove a file twice
			staged[df.FilePath()] = true
			rw.DeleteFile(df)
		}
	}
	if err := rw.Commit(ctx); err != nil {
		return fmt.Errorf("lake compaction: %w", err)
	}
	return nil
}

func (t *Table) setCurrent(tbl *table.Table) {
	t.mu.Lock()
	t.tbl = tbl
	t.mu.Unlock()
}

// planCompaction groups a snapshot's data files for rewriting: per
// partition, in offset order, runs of consecutive files that are smaller
// than 3/4 of the target or have deletes, cut where a run reaches the
// target. A run of one small file without deletes gains nothing and stays.
// kept lists the tasks left as they are.
func planCompaction(tasks []table.FileScanTask, target int64, offsetID int) (groups []table.CompactionTaskGroup, kept []table.FileScanTask) {
	byPartition := map[string][]table.FileScanTask{}
	for _, task := range tasks {
		k := partitionKey(task.File)
		byPartition[k] = append(byPartition[k], task)
	}
	for _, k := range slices.Sorted(maps.Keys(byPartition)) {
		part := byPartition[k]
		slices.SortStableFunc(part, func(a, b table.FileScanTask) int {
			return cmp.Compare(lowerBound(a.File, offsetID), lowerBound(b.File, offsetID))
		})
		var run []table.FileScanTask
		var size int64
		flush := func() {
			if len(run) > 1 || len(run) == 1 && hasDeletes(run[0]) {
				groups = append(groups, table.CompactionTaskGroup{PartitionKey: k, Tasks: run, TotalSizeBytes: size})
			} else {
				kept = append(kept, run...)
			}
			run, size = nil, 0
		}
		for _, task := range part {
			if task.File.FileSizeBytes() >= target*3/4 && !hasDeletes(task) {
				flush()
				kept = append(kept, task)
				continue
			}
			if size > 0 && size+task.File.FileSizeBytes() > target {
				flush()
			}
			run, size = append(run, task), size+task.File.FileSizeBytes()
		}
		flush()
	}
	return groups, kept
}

func hasDeletes(t table.FileScanTask) bool {
	return len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0
}

// deadDeletes lists the snapshot's delete files that apply to no kept data
// file: once the rewritten files are replaced, they apply to nothing.
func (t *Table) deadDeletes(ctx context.Context, tbl *table.Table, snap *table.Snapshot, kept []table.FileScanTask) ([]iceberg.DataFile, error) {
	live := map[string]bool{}
	for _, task := range kept {
		for _, d := range slices.Concat(task.DeleteFiles, task.EqualityDeleteFiles, task.DeletionVectorFiles) {
			live[d.FilePath()] = true
		}
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("list lake manifests: %w", err)
	}
	var dead []iceberg.DataFile
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentDeletes {
			continue
		}
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				return nil, fmt.Errorf("read lake manifest: %w", err)
			}
			if !live[e.DataFile().FilePath()] {
				dead = append(dead, e.DataFile())
			}
		}
	}
	return dead, nil
}
