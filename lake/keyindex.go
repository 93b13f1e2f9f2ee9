package lake

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/fluxgate-io/fluxgate/row"
)

// keyIndex says where each primary key's row lives in one lake snapshot, so
// that a round retires exactly the positions of the keys it changes. It is
// derived from the lake alone (the lake is the only durable record): loaded
// from the snapshot's files when a table is opened, or when the lake moved
// past it (a failed commit, a compaction), and kept up to date by each
// commit afterwards. A stale index is never used: it names its snapshot.
type keyIndex struct {
	snapshot int64 // the snapshot it describes; 0 for an empty lake
	files    []iceberg.DataFile
	rows     *keyLocs
}

// errEqualityDeletes is why a snapshot has no key index: a lake written
// before position deletes still has equality deletes, which only a
// compaction turns into rows whose positions are known.
var errEqualityDeletes = errors.New("the lake snapshot has equality deletes")

// loadKeyIndex reads the key of every live row of tbl's current snapshot.
func loadKeyIndex(ctx context.Context, tbl *table.Table, keyIDs []int) (*keyIndex, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return &keyIndex{rows: newKeyLocs(0)}, nil
	}
	scan := tbl.Scan(table.WithSnapshotID(snap.SnapshotID))
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan the lake's key index: %w", err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	deleted := map[string]map[int64]bool{} // data file → deleted positions
	read := map[string]bool{}
	var rows int64 // at least the keys, so that the map is sized once
	for _, task := range tasks {
		rows += task.File.Count()
		switch {
		case len(task.EqualityDeleteFiles) > 0:
			return nil, errEqualityDeletes
		case len(task.DeletionVectorFiles) > 0:
			return nil, fmt.Errorf("lake snapshot %d has deletion vectors, which fluxgate does not write", snap.SnapshotID)
		}
		for _, d := range task.DeleteFiles {
			if read[d.FilePath()] {
				continue
			}
			read[d.FilePath()] = true
			err := readPosDeletes(ctx, fs, d.FilePath(), func(path string, pos int64) {
				if deleted[path] == nil {
					deleted[path] = map[int64]bool{}
				}
				deleted[path][pos] = true
			})
			if err != nil {
				return nil, err
			}
		}
	}
	idx := &keyIndex{snapshot: snap.SnapshotID, rows: newKeyLocs(int(rows))}
	for _, task := range tasks {
		n := len(idx.files)
		idx.files = append(idx.files, task.File)
		dels := deleted[task.File.FilePath()]
		err := readKeys(ctx, fs, task.File.FilePath(), keyIDs, func(pos int64, key []byte) error {
			if dels[pos] {
				return nil
			}
			loc, err := newRowLoc(n, pos)
			if err == nil && !idx.rows.add(key, loc) {
				err = fmt.Errorf("lake snapshot %d holds two live rows of one primary key (%s at %d)", snap.SnapshotID, task.File.FilePath(), pos)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return idx, nil
}

// indexChange is what one commit does to a key index: the rows it retires
// and the rows it adds. It applies only once the commit stands. The index
// is read, not written, until then: a round's new rows are one map write
// each, at apply.
type indexChange struct {
	idx     *keyIndex
	deletes []posDelete        // the retired rows' positions
	retired map[string]bool    // the keys whose rows the commit retires
	files   []iceberg.DataFile // added data files, numbered after idx.files
	added   []addedRow
}

type addedRow struct {
	key string
	loc rowLoc
}

// len is how many keys the index holds.
func (idx *keyIndex) len() int { return idx.rows.len() }

func (idx *keyIndex) change() *indexChange {
	return &indexChange{idx: idx, retired: map[string]bool{}}
}

// retire retires the key's row in the snapshot, if it has one.
func (c *indexChange) retire(key []byte) {
	if c.retired[string(key)] {
		return
	}
	if loc, ok := c.idx.rows.get(key); ok {
		c.retired[string(key)] = true
		c.deletes = append(c.deletes, posDelete{c.idx.files[loc.file], int64(loc.pos)})
	}
}

// addFile reads the keys of a data file the commit adds: each retires the
// key's earlier row. The round wrote one row per key (it folds each key's
// changes to its last).
func (c *indexChange) addFile(ctx context.Context, fs iceio.IO, df iceberg.DataFile, keyIDs []int) error {
	n := len(c.idx.files) + len(c.files)
	c.files = append(c.files, df)
	return readKeys(ctx, fs, df.FilePath(), keyIDs, func(pos int64, key []byte) error {
		c.retire(key)
		loc, err := newRowLoc(n, pos)
		c.added = append(c.added, addedRow{string(key), loc})
		return err
	})
}

// apply makes the index describe the committed snapshot.
func (c *indexChange) apply(snapshot int64) {
	idx := c.idx
	idx.files = append(idx.files, c.files...)
	for k := range c.retired {
		idx.rows.delete([]byte(k))
	}
	for _, a := range c.added {
		idx.rows.set([]byte(a.key), a.loc)
	}
	idx.snapshot = snapshot
}

// followRewrite makes the index describe tbl's current snapshot, a
// compaction of the snapshot it describes, whose files were before: the
// rows of the rewritten files are now in the snapshot's new files, whose
// keys are read; the rows of the files kept did not move.
func (idx *keyIndex) followRewrite(ctx context.Context, tbl *table.Table, before []table.FileScanTask, keyIDs []int) error {
	snap := tbl.CurrentSnapshot()
	scan := tbl.Scan(table.WithSnapshotID(snap.SnapshotID))
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	old := map[string]bool{}
	for _, task := range before {
		old[task.File.FilePath()] = true
	}
	for _, task := range tasks {
		if old[task.File.FilePath()] {
			continue
		}
		n := len(idx.files)
		idx.files = append(idx.files, task.File)
		err := readKeys(ctx, fs, task.File.FilePath(), keyIDs, func(pos int64, key []byte) error {
			loc, err := newRowLoc(n, pos)
			idx.rows.set(key, loc)
			return err
		})
		if err != nil {
			return err
		}
	}
	idx.snapshot = snap.SnapshotID
	return nil
}

// readKeys passes the encoded primary key of each row of a data file, with
// its position, to fn.
func readKeys(ctx context.Context, fs iceio.IO, path string, keyIDs []int, fn func(pos int64, key []byte) error) error {
	var key []byte
	vals := make([]any, len(keyIDs))
	types := make([]arrow.DataType, len(keyIDs))
	var pos int64
	return readColumns(ctx, fs, path, keyIDs, func(cols []arrow.Array) error {
		for j, c := range cols {
			types[j] = c.DataType()
		}
		for i := range cols[0].Len() {
			for j, c := range cols {
				vals[j] = row.View(c, i)
			}
			var err error
			if key, err = row.EncodeKey(key[:0], types, vals); err != nil {
				return fmt.Errorf("lake file %s row %d: %w", path, pos, err)
			}
			if err := fn(pos, key); err != nil {
				return err
			}
			pos++
		}
		return nil
	})
}

// readPosDeletes passes each (file_path, pos) of a position-delete file to fn.
func readPosDeletes(ctx context.Context, fs iceio.IO, path string, fn func(path string, pos int64)) error {
	return readColumns(ctx, fs, path, []int{posDeleteFilePathID, posDeletePosID}, func(cols []arrow.Array) error {
		paths, ok1 := cols[0].(interface{ Value(int) string })
		positions, ok2 := cols[1].(interface{ Value(int) int64 })
		if !ok1 || !ok2 {
			return fmt.Errorf("position-delete file %s: columns of types %s, %s", path, cols[0].DataType(), cols[1].DataType())
		}
		for i := range cols[0].Len() {
			fn(paths.Value(i), positions.Value(i))
		}
		return nil
	})
}

// readColumns reads the top-level columns of a Parquet file with the given
// Iceberg field ids, batch by batch, in file order.
func readColumns(ctx context.Context, fs iceio.IO, path string, ids []int, fn func([]arrow.Array) error) (err error) {
	f, err := fs.Open(path)
	if err != nil {
		return fmt.Errorf("open lake file: %w", err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return fmt.Errorf("lake file %s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("lake file %s: %w", path, err)
	}
	leaves := make([]int, len(ids))
	for j, id := range ids {
		leaves[j] = -1
		for _, fld := range fr.Manifest.Fields {
			if v, ok := fld.Field.Metadata.GetValue("PARQUET:field_id"); ok && v == strconv.Itoa(id) && fld.ColIndex >= 0 {
				leaves[j] = fld.ColIndex
			}
		}
		if leaves[j] < 0 {
			return fmt.Errorf("lake file %s has no column of field id %d", path, id)
		}
	}
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return fmt.Errorf("lake file %s: %w", path, err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		cols := make([]arrow.Array, len(ids))
		for j, l := range leaves {
			for k, fld := range rec.Schema().Fields() {
				if v, _ := fld.Metadata.GetValue("PARQUET:field_id"); v == strconv.Itoa(ids[j]) {
					cols[j] = rec.Column(k)
				}
			}
			if cols[j] == nil {
				return fmt.Errorf("lake file %s: column %d was not read", path, l)
			}
		}
		if err := fn(cols); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("read lake file %s: %w", path, err)
	}
	return nil
}
