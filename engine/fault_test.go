package engine

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/diskfault"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A primary-key table whose changelog cannot be synced refuses writes, keeps
// serving reads, and takes writes again once the disk works, without a
// restart, with every acknowledged row there once.
func TestPrimaryKeyWritesResumeAfterFsyncFailure(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	faults := diskfault.New(vfs.Default)
	e, err := Open(t.Context(), t.TempDir(), Options{Allocator: mem, Log: LogOptions{FS: faults}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), catalog.TableSpec{
		Table:      "kv",
		Columns:    []catalog.Column{{Name: "k", Type: "BIGINT"}, {Name: "n", Type: "BIGINT"}},
		PrimaryKey: []string{"k"},
		Options:    map[string]string{"bucket.num": "2"},
	}, false); err != nil {
		t.Fatal(err)
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
	if err := write(0, 10); err != nil {
		t.Fatal(err)
	}

	faults.Set(diskfault.Sync, ".log", syscall.EIO)
	for range 2 {
		if err := write(10, 20); !errs.Is(err, errs.Unavailable) || !errors.Is(err, syscall.EIO) {
			t.Fatalf("write while fsync fails: %v, want unavailable caused by EIO", err)
		}
	}
	if got := countKeys(t, e, "kv"); got != 10 {
		t.Fatalf("read while fsync fails: %d keys, want 10", got)
	}

	faults.Clear()
	if err := write(10, 20); err != nil {
		t.Fatalf("write once the disk works: %v", err)
	}
	if got := countKeys(t, e, "kv"); got != 20 {
		t.Fatalf("%d keys, want 20", got)
	}
}

// keyRecord holds keys [from, to), each with n = k.
func keyRecord(mem memory.Allocator, from, to int64) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for k := from; k < to; k++ {
		b.Field(0).(*array.Int64Builder).Append(k)
		b.Field(1).(*array.Int64Builder).Append(k)
	}
	return b.NewRecordBatch()
}

// countKeys reads a primary-key table and checks that each key appears once
// with n = k.
func countKeys(t *testing.T, e *Engine, table string) int {
	t.Helper()
	seen := map[int64]bool{}
	scan(t, e, protocol.ScanRequest{Table: table}, func(rec arrow.RecordBatch) {
		ks, ns := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64)
		for i := range ks.Len() {
			if seen[ks.Value(i)] || ns.Value(i) != ks.Value(i) {
				t.Fatalf("key %d: seen before %v, n %d", ks.Value(i), seen[ks.Value(i)], ns.Value(i))
			}
			seen[ks.Value(i)] = true
		}
	})
	return len(seen)
}
