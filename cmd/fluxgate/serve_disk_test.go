package main

import (
	"log/slog"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/fluxgate-io/fluxgate/engine"
)

// On a full disk the catalog cannot write its first manifest, which pebble
// reports by panicking in its logger: serve must say so in one line instead.
func TestOpenEngineOnFullDiskIsOneLineError(t *testing.T) {
	full := errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileWrite {
			return syscall.ENOSPC
		}
		return nil
	}))
	eng, err := openEngine(t.Context(), slog.New(slog.DiscardHandler), t.TempDir(), engine.Options{CatalogFS: full})
	if err == nil {
		eng.Close()
		t.Fatal("the engine opened on a full disk")
	}
	if msg := err.Error(); !strings.Contains(msg, "no space left on device") || strings.Contains(msg, "\n") {
		t.Fatalf("want one line naming the full disk, got %q", msg)
	}
}
