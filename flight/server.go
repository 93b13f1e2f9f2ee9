// Package flight serves the engine over Arrow Flight (PROTOCOL.md). Each RPC
// lives in a file of its own that opens with its contract; errors.go is the
// single place where error kinds become gRPC codes. It owns no state beyond
// the engine it serves.
package flight

import (
	"log/slog"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/engine"
)

// Service implements the Flight service on top of an engine.
type Service struct {
	flight.BaseFlightServer
	eng    *engine.Engine
	mem    memory.Allocator
	log    *slog.Logger
	limits limits
}

// Options configure a Service. The zero value means the defaults.
type Options struct {
	Allocator memory.Allocator // default memory.DefaultAllocator
	Logger    *slog.Logger     // default slog.Default()
	Limits    Limits
}

// New returns the Flight service of eng.
func New(eng *engine.Engine, opts Options) *Service {
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Service{eng: eng, mem: opts.Allocator, log: opts.Logger, limits: newLimits(opts.Limits)}
}
