package pkwrite

import (
	"fmt"

	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/merge"
	"github.com/fluxgate-io/fluxgate/row"
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
	if err := env.Replay(env.KV, t); err != nil {
		return fmt.Errorf("recover %s: %w", t.Current().Info.Path(), err)
	}
	t.PK.InFlight.Reset()
	return nil
}

// Replay brings a primary-key table's state up to its log: the state of a
// bucket is committed only after the changelog that produced it is durable,
// so after a crash it may lag the log, never lead it. The changelog's
// after-images are applied from each bucket's applied offset on, into store
// (env.KV, or the one kv.Store.Reopen hands over), with the row count of
// each bucket (rowcount.go).
func (env *Env) Replay(store *kv.Store, t *table.Table) error {
	sch := t.Current()
	info, st := sch.Info, t.PK
	schema := info.ArrowSchema()
	if st.Counted {
		if err := env.countOldBuckets(store, info); err != nil {
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
		reader, err := t.Log.NewReader(b, applied, table.Indexes(len(sch.Types)))
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
		env.Logger.Info("recovered primary-key state from the changelog", "table", info.Path().String(), "bucket", b, "from", applied, "to", hw, "changes", n)
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
		d = rowsDelta(had, v != nil)
	}
	if v == nil {
		return d, txn.Delete(key)
	}
	return d, txn.Set(key, v)
}
