package server

import (
	"context"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// fullDisk is the real disk where every write to a file whose name ends with
// suffix fails with ENOSPC, until heal is called.
func fullDisk(suffix string) (fs vfs.FS, heal func()) {
	var healed atomic.Bool
	return errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !healed.Load() && op.Kind == errorfs.OpFileWrite && strings.HasSuffix(op.Path, suffix) {
			return syscall.ENOSPC
		}
		return nil
	})), func() { healed.Store(true) }
}

// wantOneLineFullDisk checks that opening the data directory failed with one
// line naming the full disk.
func wantOneLineFullDisk(t *testing.T, eng *engine.Engine, err error) {
	t.Helper()
	if err == nil {
		eng.Close()
		t.Fatal("the engine opened on a full disk")
	}
	if msg := err.Error(); !strings.Contains(msg, "no space left on device") || strings.Contains(msg, "\n") {
		t.Fatalf("want one line naming the full disk, got %q", msg)
	}
}

// On a full disk the catalog cannot write its first manifest, which pebble
// reports by calling its logger's Fatalf: serve must say so in one line
// instead of crashing.
func TestOpenEngineOnFullDiskIsOneLineError(t *testing.T) {
	full, _ := fullDisk("")
	eng, err := openEngine(t.Context(), t.TempDir(), engine.Options{CatalogFS: full})
	wantOneLineFullDisk(t, eng, err)
}

// Restarting on a full disk with an existing catalog and state used to hang
// in pebble's Open, which retries the flush of the recovered log for ever:
// it is a one-line error, at once, for the catalog and for the primary-key
// state alike.
// keys is a record of one BIGINT column k.
func keys(t *testing.T, ks ...int64) arrow.RecordBatch {
	t.Helper()
	b := array.NewInt64Builder(memtest.Allocator(t))
	defer b.Release()
	b.AppendValues(ks, nil)
	col := b.NewArray()
	defer col.Release()
	return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, int64(len(ks)))
}

func TestRestartOnFullDiskIsOneLineError(t *testing.T) {
	for _, store := range []string{"catalog", "kv"} {
		t.Run(store, func(t *testing.T) {
			dir := t.TempDir()
			eng, err := openEngine(t.Context(), dir, engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := eng.CreateTable(t.Context(), catalog.TableSpec{
				Table:      "t",
				Columns:    []catalog.Column{{Name: "k", Type: "BIGINT"}},
				PrimaryKey: []string{"k"},
			}, false); err != nil {
				t.Fatal(err)
			}
			ws, err := eng.OpenWrite(protocol.WriteRequest{Table: "t"})
			if err != nil {
				t.Fatal(err)
			}
			rec := keys(t, 1, 2, 3)
			defer rec.Release()
			if _, err := ws.Write(t.Context(), rec); err != nil {
				t.Fatal(err)
			}
			if err := eng.Close(); err != nil {
				t.Fatal(err)
			}

			full, heal := fullDisk(".sst")
			opts := engine.Options{}
			if store == "catalog" {
				opts.CatalogFS = full
			} else {
				opts.KVFS = full
			}
			// The abandoned open retries until the disk works, then closes
			// the store and lets go of the directory.
			t.Cleanup(func() {
				heal()
				deadline := time.Now().Add(10 * time.Second)
				for {
					eng, err := openEngine(context.Background(), dir, engine.Options{})
					if err == nil {
						eng.Close()
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("the data directory does not open once the disk works: %v", err)
					}
					time.Sleep(10 * time.Millisecond)
				}
			})
			type result struct {
				eng *engine.Engine
				err error
			}
			opened := make(chan result, 1)
			go func() {
				eng, err := openEngine(t.Context(), dir, opts)
				opened <- result{eng, err}
			}()
			select {
			case r := <-opened:
				wantOneLineFullDisk(t, r.eng, r.err)
			case <-time.After(10 * time.Second):
				t.Fatal("opening the data directory on a full disk did not return")
			}
		})
	}
}
