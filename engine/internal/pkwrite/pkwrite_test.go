package pkwrite

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// openTable opens a primary-key table of three buckets with its state in a
// store of its own, and the Env that writes to it.
func openTable(t *testing.T) (*table.Table, *Env) {
	t.Helper()
	dir := t.TempDir()
	cat, err := catalog.Open(filepath.Join(dir, "catalog"), catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOrFail(t, cat.Close) })
	info, _, err := cat.CreateTable(catalog.TableSpec{
		Table:      "users",
		Columns:    []catalog.Column{{Name: "id", Type: "BIGINT"}, {Name: "name", Type: "STRING"}},
		PrimaryKey: []string{"id"},
		Options:    map[string]string{catalog.OptBucketNum: "3"},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	store := openStore(t, filepath.Join(dir, "kv"))
	tbl, err := table.Open(filepath.Join(dir, "log"), info, logstore.Options{}, memtest.Allocator(t), store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOrFail(t, tbl.Log.Close) })
	env := &Env{Alloc: memtest.Allocator(t), KV: store, Logger: slog.New(slog.DiscardHandler)}
	return tbl, env
}

func openStore(t *testing.T, dir string) *kv.Store {
	t.Helper()
	store, err := kv.Open(dir, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOrFail(t, store.Close) })
	return store
}

func closeOrFail(t *testing.T, close func() error) {
	if err := close(); err != nil {
		t.Error(err)
	}
}

// write applies one batch (JSON rows) in mode and waits for its commit.
func write(t *testing.T, env *Env, tbl *table.Table, mode, rows string) {
	t.Helper()
	sch := tbl.Current()
	w, err := Open(sch, protocol.WriteRequest{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memtest.Allocator(t), sch.Info.ArrowSchema(), strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	txn, err := w.Submit(env, tbl, sch, rec, logstore.Writer{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Wait(); err != nil {
		t.Fatal(err)
	}
}

// A state store that lost everything is caught up by Replay with the rows,
// row counts and applied offsets that the writes committed.
func TestReplayRebuildsTheStateTheWritesCommitted(t *testing.T) {
	tbl, env := openTable(t)
	write(t, env, tbl, protocol.ModeUpsert, `[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}, {"id": 4, "name": "d"}]`)
	write(t, env, tbl, protocol.ModeDelete, `[{"id": 2}]`)
	write(t, env, tbl, protocol.ModeUpsert, `[{"id": 3, "name": "cc"}]`)

	lost := openStore(t, t.TempDir())
	if err := tbl.Replay(lost, env.Logger); err != nil {
		t.Fatal(err)
	}
	info := tbl.Current().Info
	var total int64
	for b := range info.BucketCount() {
		want, _, err := env.KV.RowCount(info.TableID, b)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := lost.RowCount(info.TableID, b)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("bucket %d: replayed row count %d, the writes committed %d", b, got, want)
		}
		total += got
		applied, err := lost.Applied(info.TableID, b)
		if err != nil {
			t.Fatal(err)
		}
		if hw := tbl.Log.HighWatermark(b); applied != hw {
			t.Errorf("bucket %d: replayed up to offset %d, the log ends at %d", b, applied, hw)
		}
	}
	if total != 3 {
		t.Errorf("replayed %d rows in all, want 3", total)
	}
}

// Undoing every bucket to offset 0 deletes every key written since, the
// key deleted again among them.
func TestUndoOpsToTheStartDeleteEveryKey(t *testing.T) {
	tbl, env := openTable(t)
	write(t, env, tbl, protocol.ModeUpsert, `[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}]`)
	write(t, env, tbl, protocol.ModeDelete, `[{"id": 2}]`)

	sch := tbl.Current()
	deleted := map[int64]bool{}
	for b := range sch.Info.BucketCount() {
		ops, err := UndoOps(context.Background(), tbl, sch, b, 0, tbl.Log.HighWatermark(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ops {
			if !o.Del {
				t.Errorf("bucket %d: undo upserts %v, want only deletes", b, o.Row)
			}
			deleted[o.Row[0].(int64)] = true
		}
	}
	if len(deleted) != 3 || !deleted[1] || !deleted[2] || !deleted[3] {
		t.Errorf("undo deletes keys %v, want 1, 2 and 3", deleted)
	}
}
