package table

import (
	"fmt"
	"log/slog"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/merge"
	"github.com/fluxgate-io/fluxgate/row"
)

// Replay brings a primary-key table's state up to its log: the state of a
// bucket is committed only after the changelog that produced it is durable,
// so after a crash it may lag the log, never lead it. The changelog's
// after-images are applied from each bucket's applied offset on, into store
// (the engine's, or the one kv.Store.Reopen hands over), with the row count of
// each bucket (rowcount.go).
func (t *Table) Replay(store *kv.Store, logger *slog.Logger) error {
	sch := t.Current()
	info, st := sch.Info, t.PK
	schema := info.ArrowSchema()
	if st.Counted {
		if err := countOldBuckets(store, info, logger); err != nil {
			return err
		}
	}
	for b := range info.BucketCount() {
		applied, err := store.Applied(info.TableID, b)
		if err != nil {
			return err
		}
		hw := t.Log.HighWatermark(b)
		switch {
		case applied == hw:
			continue
		case applied > hw:
			return fmt.Errorf("bucket %d: state is ahead of the log (applied %d, log end %d)", b, applied, hw)
		case applied < t.Log.EarliestOffset(b):
			return errs.New(errs.DataLoss, "bucket %d: the changelog from offset %d, needed to recover the state, has expired", b, applied)
		}
		reader, err := t.Log.NewReader(b, applied, Indexes(len(sch.Types)))
		if err != nil {
			return err
		}
		txn := store.NewTxn()
		n := 0
		var rows int64 // keys added minus keys removed, if the table counts them
		var key, val []byte
		for {
			f, err := reader.Next(hw)
			if err != nil {
				reader.Close()
				txn.Abort()
				return err
			}
			if f == nil {
				break
			}
			if len(f.ChangeTypes) != f.Rows {
				// A log table's frame, not a changelog's: the data directory
				// holds a foreign log, and guessing its changes would be worse
				// than leaving the table unavailable.
				reader.Close()
				txn.Abort()
				return errs.New(errs.DataLoss, "bucket %d: the frame at offset %d has %d change types for %d rows: not a primary-key table's changelog", b, f.BaseOffset, len(f.ChangeTypes), f.Rows)
			}
			rec, err := f.Record(sch.Decoder, schema)
			if err != nil {
				reader.Close()
				txn.Abort()
				return err
			}
			for i := range f.Rows {
				kind := merge.Kind(f.ChangeTypes[i])
				if kind == merge.UpdateBefore {
					continue
				}
				r := row.FromRecord(rec, i, nil)
				var d int64
				if key, err = st.Key(key[:0], r); err == nil {
					var v []byte // nil: a delete
					if kind != merge.Delete {
						val = row.Encode(val[:0], info.SchemaID, sch.Types, r)
						v = append([]byte(nil), val...)
					}
					d, err = replayChange(txn, kv.RowKey(nil, info.TableID, b, key), v, st.Counted)
					rows += d
				}
				if err != nil {
					rec.Release()
					reader.Close()
					txn.Abort()
					return err
				}
				n++
			}
			rec.Release()
		}
		reader.Close()
		if err := txn.SetApplied(info.TableID, b, hw); err != nil {
			txn.Abort()
			return err
		}
		if st.Counted {
			txn.CountRows(info.TableID, b, rows)
		}
		if err := txn.Commit(); err != nil {
			return err
		}
		logger.Info("recovered primary-key state from the changelog", "table", info.Path().String(), "bucket", b, "from", applied, "to", hw, "changes", n)
	}
	return nil
}

// replayChange applies one after-image of the changelog (v; nil for a
// delete) to key, and returns how it changes the bucket's row count if
// count is set: whether the key was there is read through the txn.
func replayChange(txn *kv.Txn, key, v []byte, count bool) (int64, error) {
	var d int64
	if count {
		_, had, err := txn.Get(key)
		if err != nil {
			return 0, err
		}
		d = RowsDelta(had, v != nil)
	}
	if v == nil {
		return d, txn.Delete(key)
	}
	return d, txn.Set(key, v)
}

// A primary-key table's row count per bucket (engine's stats.go serves it)
// is kept by the writes (pkwrite) and the replay here: each counts the keys
// it adds and removes, in the kv batch that changes the bucket's rows.

// countOldBuckets counts the rows of the table's buckets that have no count
// yet (a table from before counts were kept); Replay runs it first, with no
// write under way.
func countOldBuckets(store *kv.Store, info *catalog.TableInfo, logger *slog.Logger) error {
	counted, err := store.CountBuckets(info.TableID, info.BucketCount())
	if err != nil {
		return fmt.Errorf("count the rows of %s: %w", info.Path(), err)
	}
	var rows int64
	for _, n := range counted {
		rows += n
	}
	if rows > 0 { // a new table's empty buckets are not worth a line
		logger.Info("counted the rows of primary-key buckets that kept no count", "table", info.Path().String(), "buckets", len(counted), "rows", rows)
	}
	return nil
}

// RowsDelta is how a key going from present (or not) to present (or not)
// changes its bucket's row count.
func RowsDelta(before, after bool) int64 {
	switch {
	case after && !before:
		return 1
	case before && !after:
		return -1
	}
	return 0
}
