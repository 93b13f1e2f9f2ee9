package server

import (
	"log/slog"
	"os"
	"runtime/debug"

	fgflight "github.com/fluxgate-io/fluxgate/flight"
)

// goMemorySlack is the Go memory a server needs beyond its memory budget
// (--max-write-bytes): its own heap at rest, the runtime, goroutine stacks,
// the transport's buffers, and garbage the collector has not yet returned.
// Pebble's block cache and memtables are not Go memory (they are allocated
// outside the Go heap), nor is the binary's code.
const goMemorySlack = 160 << 20

// SetMemoryLimit sets the Go runtime's soft memory limit to the memory
// budget plus goMemorySlack, so that the collector works harder as the heap
// nears what the budget lets clients hold, instead of letting garbage grow
// the heap to twice what is live (GOGC) after repeated bursts. A GOMEMLIMIT
// in the environment wins. It returns the limit in force. fluxgate serve
// calls it; servers in other processes (bench, demo, tests) leave the
// process's limit alone.
func SetMemoryLimit(cfg *Config, log *slog.Logger) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1)
	}
	limit := fgflight.Limits{MaxWriteBytes: cfg.MaxWriteBytes}.Budget() + goMemorySlack
	debug.SetMemoryLimit(limit)
	log.Info("Go memory limit set from the memory budget (--max-write-bytes); GOMEMLIMIT overrides it", "bytes", limit)
	return limit
}
