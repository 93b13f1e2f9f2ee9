package server

import (
	"log/slog"
	"math"
	"runtime/debug"
	"testing"
)

// serve's Go memory limit is the memory budget plus goMemorySlack, unless
// GOMEMLIMIT is set, which wins.
func TestSetMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	log := slog.New(slog.DiscardHandler)

	t.Setenv("GOMEMLIMIT", "")
	if got, want := SetMemoryLimit(&Config{MaxWriteBytes: 256 << 20}, log), int64(256<<20+goMemorySlack); got != want || debug.SetMemoryLimit(-1) != want {
		t.Fatalf("limit %d (runtime %d), want %d", got, debug.SetMemoryLimit(-1), want)
	}
	if got, want := SetMemoryLimit(&Config{}, log), int64(1<<30+goMemorySlack); got != want {
		t.Fatalf("default budget: limit %d, want %d", got, want)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got := SetMemoryLimit(&Config{MaxWriteBytes: 256 << 20}, log); got != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT set: limit %d, want the runtime's own", got)
	}
}
