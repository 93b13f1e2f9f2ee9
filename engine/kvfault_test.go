package engine

import (
	"context"
	"maps"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A primary-key write whose state cannot be committed (the write of the
// state store's own log fails) ends at once with UNAVAILABLE naming the
// cause, instead of crashing the process in pebble's Fatalf. Reads go on.
// Once the disk works, the next write reopens the state store and replays
// the changelog into it, without a restart: every acknowledged row is there
// once, the failed write in full or not at all, the row count is theirs,
// auto-increment ids handed out before are not handed out again, and lookups
// agree with scans.
func TestPrimaryKeyWritesResumeAfterStateLogWriteFails(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var failing atomic.Bool
	kvFS := errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if failing.Load() && (op.Kind == errorfs.OpCreate || op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData) {
			return syscall.EIO
		}
		return nil
	}))
	e, err := Open(t.Context(), t.TempDir(), Options{Allocator: mem, KVFS: kvFS})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Errorf("close after recovery: %v", err)
		}
	}()
	for _, spec := range []catalog.TableSpec{{
		Table:      "kv",
		Columns:    []catalog.Column{{Name: "k", Type: "BIGINT"}, {Name: "n", Type: "BIGINT"}},
		PrimaryKey: []string{"k"},
		Options:    map[string]string{"bucket.num": "2"},
	}, {
		Table:      "dict",
		Columns:    []catalog.Column{{Name: "k", Type: "BIGINT"}, {Name: "id", Type: "BIGINT"}},
		PrimaryKey: []string{"k"},
		Options:    map[string]string{"auto-increment.fields": "id", "bucket.num": "2"},
	}} {
		if _, err := e.CreateTable(t.Context(), spec, false); err != nil {
			t.Fatal(err)
		}
	}
	write := func(from, to int64) error {
		ws, err := e.OpenWrite(protocol.WriteRequest{Table: "kv"})
		if err != nil {
			t.Fatal(err)
		}
		rec := keyRecord(mem, from, to)
		defer rec.Release()
		_, err = ws.Write(context.Background(), rec)
		return err
	}
	ids := map[int64]int64{} // dictionary key → id, as first handed out
	insert := func(from, to int64) error {
		got, err := dictIDs(t, e, from, to)
		for k, id := range got {
			if prev, ok := ids[k]; ok && prev != id {
				t.Fatalf("key %d: id %d, was %d", k, id, prev)
			}
			ids[k] = id
		}
		return err
	}
	if err := write(0, 10); err != nil {
		t.Fatal(err)
	}
	if err := insert(0, 10); err != nil {
		t.Fatal(err)
	}

	// The state is committed without a sync (the table's log is the
	// durable record), so pebble writes its log in the background and the
	// failure meets the first commit after pebble has tried to write a full
	// block of its log: a few writes may still be acknowledged.
	failing.Store(true)
	const step = 1000
	acked := int64(10)
	for ; ; acked += step {
		if acked > 20*step {
			t.Fatal("writes go on being acknowledged while the state's log fails")
		}
		err := write(acked, acked+step)
		if err == nil {
			continue
		}
		if !errs.Is(err, errs.Unavailable) || !strings.Contains(err.Error(), "input/output error") {
			t.Fatalf("write while the state's log fails: %v, want unavailable naming EIO", err)
		}
		break
	}
	if got := countKeys(t, e, "kv"); int64(got) != acked {
		t.Fatalf("read while the state's log fails: %d keys, want %d", got, acked)
	}
	if err := write(1e6, 1e6+10); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("write while the disk still fails: %v, want unavailable", err)
	}
	if err := insert(100, 110); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("insert-if-not-exists while the disk still fails: %v, want unavailable", err)
	}

	failing.Store(false)
	if err := write(1e6, 1e6+10); err != nil {
		t.Fatalf("write once the disk works again, without a restart: %v", err)
	}
	// The failed write is there in full if its changelog was appended
	// before the state failed, or not at all if it was refused first.
	if got := int64(countKeys(t, e, "kv")); got != acked+10 && got != acked+step+10 {
		t.Fatalf("after recovery: %d keys, want the %d acknowledged and the 10 written since, and perhaps the %d of the failed write", got, acked, step)
	}
	// The row count, replayed with the rows, is theirs.
	if got, err := e.TableStats(t.Context(), protocol.TableStatsRequest{Table: "kv"}); err != nil || got.RowCount != int64(countKeys(t, e, "kv")) {
		t.Fatalf("after recovery: table-stats %+v (%v), want the %d keys read", got, err, countKeys(t, e, "kv"))
	}
	if err := insert(0, 20); err != nil {
		t.Fatalf("insert-if-not-exists after recovery: %v", err)
	}
	seen := map[int64]int64{}
	for k, id := range ids {
		if other, dup := seen[id]; dup {
			t.Fatalf("id %d handed out to keys %d and %d", id, other, k)
		}
		seen[id] = k
	}
	if len(ids) != 20 {
		t.Fatalf("%d dictionary keys, want 20", len(ids))
	}
	// Lookups agree with a scan of the state.
	scanned := map[int64]int64{}
	scan(t, e, protocol.ScanRequest{Table: "dict"}, func(rec arrow.RecordBatch) {
		ks, vs := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64)
		for i := range ks.Len() {
			scanned[ks.Value(i)] = vs.Value(i)
		}
	})
	if !maps.Equal(scanned, ids) {
		t.Fatalf("scan %v, lookups %v", scanned, ids)
	}
}

// dictIDs looks up keys from..to-1 in table dict, inserting those missing,
// and returns the id of each key the answer holds.
func dictIDs(t *testing.T, e *Engine, from, to int64) (map[int64]int64, error) {
	t.Helper()
	l, err := e.OpenLookup(protocol.LookupRequest{Table: "dict", InsertIfNotExists: true})
	if err != nil {
		t.Fatal(err)
	}
	var keys []int64
	for k := from; k < to; k++ {
		keys = append(keys, k)
	}
	rec := keyBatch(keys)
	defer rec.Release()
	ans, _, err := l.Lookup(context.Background(), rec)
	if err != nil {
		return nil, err
	}
	defer ans.Release()
	out := map[int64]int64{}
	k, id := ans.Column(ans.Schema().FieldIndices("k")[0]).(*array.Int64), ans.Column(ans.Schema().FieldIndices("id")[0]).(*array.Int64)
	for i := range k.Len() {
		out[k.Value(i)] = id.Value(i)
	}
	return out, nil
}
