package pkwrite

import (
	"log/slog"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/engine/internal/inflight"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/tables"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/merge"
	"github.com/fluxgate-io/fluxgate/row"
)

// Env is what the pipeline uses of the engine; the engine builds it once.
type Env struct {
	Alloc  memory.Allocator
	KV     *kv.Store // every primary-key table's state
	Logger *slog.Logger
	Tables *tables.Set // the tables a broken KV is replayed into (recoverkv.go)

	kvRecovery sync.Mutex // serializes reopening a broken KV (recoverKV)
}

// writable readies a primary-key table for a write: if the state store
// broke (a write of its log failed) it is reopened first, and if the
// table's last write failed its log and state are recovered.
func (env *Env) writable(t *table.Table) error {
	if env.KV.Broken() {
		if err := env.recoverKV(); err != nil {
			return err
		}
	}
	if t.PK.InFlight.Failed() != nil {
		return env.Recover(t)
	}
	return nil
}

// stage runs ops (per touched bucket, ascending) through the merge engine
// under the buckets' locks and appends the changelog; the state is committed
// once the changelog is durable (inflight.Txn.Wait).
func (env *Env) stage(t *table.Table, sch *table.Schema, wr *merge.Write, buckets []int, ops [][]Op, writer logstore.Writer) (*inflight.Txn, error) {
	if err := env.writable(t); err != nil {
		return nil, err
	}
	t.PK.Lock(buckets)
	defer t.PK.Unlock(buckets)
	return env.stageLocked(t, sch, wr, buckets, ops, writer)
}

// ApplyLocked is stage for a caller that holds the buckets' locks (undo,
// insert-if-not-exists): it returns once the write is committed, with the
// buckets' log end offsets.
func (env *Env) ApplyLocked(t *table.Table, sch *table.Schema, wr *merge.Write, buckets []int, ops [][]Op, writer logstore.Writer) (map[int]int64, error) {
	p, err := env.stageLocked(t, sch, wr, buckets, ops, writer)
	if err != nil {
		return nil, err
	}
	return p.Wait()
}

// stageLocked merges the ops and appends their changelog, and queues the
// state change to be committed once the changelog is durable (inflight).
// The caller holds the buckets' locks. wr and ops are of sch; a write whose
// schema is no longer the table's (columns were added since it was opened)
// is FAILED_PRECONDITION, since its rows would be stored narrower than the
// table.
func (env *Env) stageLocked(t *table.Table, sch *table.Schema, wr *merge.Write, buckets []int, ops [][]Op, writer logstore.Writer) (*inflight.Txn, error) {
	if now := t.Current().Info; now.SchemaID != sch.Info.SchemaID {
		return nil, errs.New(errs.FailedPrecondition, "write to %s: the table's columns changed (schema %d, now %d) while the write was open; open it again", now.Path(), sch.Info.SchemaID, now.SchemaID)
	}
	st := t.PK
	if err := st.InFlight.Failed(); err != nil {
		return nil, err
	}
	if writer.ID != "" {
		// A retried batch must not be merged again: it would take new
		// auto-increment ids for nothing.
		if prev, dup, err := t.Log.Previous(writer); err != nil || dup {
			if err != nil {
				return nil, err
			}
			return inflight.Finished(prev.Ends, nil), nil
		}
	}
	txn := env.KV.NewTxn()
	txn.ReadThrough(st.InFlight.Through(buckets))
	committed := false // or handed to the committer
	defer func() {
		if !committed {
			txn.Abort()
		}
	}()
	info := sch.Info
	mem := env.Alloc
	chlog := &changelog{t: t, sch: sch, mem: mem, writer: writer, buckets: buckets}
	defer func() {
		if !committed {
			chlog.Release()
		}
	}()
	var key []byte
	var err error
	for k, b := range buckets {
		keys := make([][]byte, len(ops[k]))
		var wanted [][]byte
		for j, o := range ops[k] {
			if o.Row == nil {
				continue
			}
			if key, err = st.Key(key[:0], o.Row); err != nil {
				return nil, errs.New(errs.InvalidArgument, "write to %s: %w", info.Path(), err)
			}
			keys[j] = kv.RowKey(nil, info.TableID, b, key)
			if o.Del || wr.NeedsOld() {
				wanted = append(wanted, keys[j])
			}
		}
		if err := txn.Prefetch(wanted); err != nil {
			return nil, err
		}
		cl := newChangelogBuilder(info.ArrowSchema(), mem)
		var rows int64 // keys added minus keys removed
		for j, o := range ops[k] {
			if o.Row == nil {
				continue
			}
			rk := keys[j]
			var old row.Row
			if o.Del || wr.NeedsOld() {
				if old, err = readRow(txn, rk, sch.Types); err != nil {
					cl.release()
					return nil, err
				}
			}
			var stored row.Row
			var changes []merge.Change
			remove := false
			if o.Del {
				remove, stored, changes, err = wr.Delete(old)
			} else {
				nextID := st.NextID
				if o.ID != 0 {
					nextID = func() (int64, error) { return o.ID, nil }
				}
				stored, changes, err = wr.Upsert(old, o.Row, nextID)
			}
			if err != nil {
				cl.release()
				return nil, err
			}
			switch {
			case remove:
				err = txn.Delete(rk)
				rows += table.RowsDelta(old != nil, false)
			case stored != nil:
				err = txn.Set(rk, row.Encode(nil, info.SchemaID, sch.Types, stored))
				rows += table.RowsDelta(old != nil, true)
			}
			if err != nil {
				cl.release()
				return nil, err
			}
			cl.add(changes)
		}
		chlog.parts = append(chlog.parts, cl.finish())
		if st.Counted {
			txn.CountRows(info.TableID, b, rows)
		}
	}
	// Done reading: holding on to the earlier txns would keep every txn
	// since the table opened reachable, each through the one after it.
	txn.ReadThrough(nil)
	p := inflight.New(txn, info.TableID, info.Path().String(), buckets, chlog)
	if writer.ID != "" {
		// An idempotent writer's batch is appended before the buckets are
		// unlocked, so that its retry finds it in the log (Previous) and
		// its sequence is checked before anything builds on it; after the
		// changelogs of the writes merged before it.
		st.InFlight.WaitAppended(buckets)
		if err := p.Append(); err != nil {
			return nil, err
		}
	}
	committed = true
	st.InFlight.Add(p)
	return p, nil
}

// readRow returns the stored row under key, or nil.
func readRow(txn *kv.Txn, key []byte, types []arrow.DataType) (row.Row, error) {
	v, ok, err := txn.Get(key)
	if err != nil || !ok {
		return nil, err
	}
	_, r, err := row.Decode(v, types)
	return r, err
}
