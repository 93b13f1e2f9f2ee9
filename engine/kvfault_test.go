package engine

import (
	"context"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
)

// A primary-key write whose state cannot be committed (the write of the
// state store's own log fails) ends at once with UNAVAILABLE naming the
// cause, instead of crashing the process in pebble's Fatalf. Reads go on;
// writes are refused until restart, since pebble cannot commit again in the
// same process; after the restart every acknowledged row is there, and so
// is the failed write, whose changelog was durable before its state failed.
func TestPrimaryKeyWriteFailsWhenStateLogWriteFails(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var failing atomic.Bool
	kvFS := errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if failing.Load() && strings.HasSuffix(op.Path, ".log") &&
			(op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData) {
			return syscall.EIO
		}
		return nil
	}))
	dir := t.TempDir()
	e, err := Open(t.Context(), dir, Options{Allocator: mem, KVFS: kvFS})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateTable(t.Context(), catalog.TableSpec{
		Table:      "kv",
		Columns:    []catalog.Column{{Name: "k", Type: "BIGINT"}, {Name: "n", Type: "BIGINT"}},
		PrimaryKey: []string{"k"},
		Options:    map[string]string{"bucket.num": "2"},
	}, false); err != nil {
		t.Fatal(err)
	}
	write := func(e *Engine, from, to int64) error {
		ws, err := e.OpenWrite(WriteRequest{Table: "kv"})
		if err != nil {
			t.Fatal(err)
		}
		rec := keyRecord(mem, from, to)
		defer rec.Release()
		_, err = ws.Write(context.Background(), rec)
		return err
	}
	if err := write(e, 0, 10); err != nil {
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
		err := write(e, acked, acked+step)
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
	failing.Store(false)
	if err := write(e, 1e6, 1e6+10); !errs.Is(err, errs.Unavailable) || !strings.Contains(err.Error(), "restart") {
		t.Fatalf("write after the state's log failed: %v, want unavailable until restart", err)
	}
	// Closing reports the failed state store; it does not hang.
	if err := e.Close(); err == nil {
		t.Fatal("close after the state failed reports nothing")
	}

	e, err = Open(t.Context(), dir, Options{Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := countKeys(t, e, "kv"); int64(got) != acked+step {
		t.Fatalf("after restart: %d keys, want %d acknowledged and the %d whose changelog was durable", got, acked, step)
	}
	if err := write(e, 1e6, 1e6+10); err != nil {
		t.Fatalf("write after restart: %v", err)
	}
	if got := countKeys(t, e, "kv"); int64(got) != acked+step+10 {
		t.Fatalf("%d keys, want %d", got, acked+step+10)
	}
}
