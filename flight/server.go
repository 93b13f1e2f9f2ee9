// Package flight serves the engine over Arrow Flight (PROTOCOL.md). Each RPC
// lives in a file of its own that opens with its contract; errors.go is the
// single place where error kinds become gRPC codes. authorize.go is the
// single place where permissions are checked. It owns no state beyond the
// engine it serves and the grants it checks.
package flight

import (
	"log/slog"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/engine"
)

// Service implements the Flight service on top of an engine.
type Service struct {
	flight.BaseFlightServer
	eng    *engine.Engine
	mem    memory.Allocator
	log    *slog.Logger
	limits limits
	acl    *acl.Store // nil: every caller may do everything
}

// Options configure a Service. The zero value means the defaults.
type Options struct {
	Allocator memory.Allocator // default memory.DefaultAllocator
	Logger    *slog.Logger     // default slog.Default()
	Limits    Limits
	// ACL holds the grants checked against authenticated callers
	// (authorize.go); nil allows everything.
	ACL *acl.Store
}

// New returns the Flight service of eng.
func New(eng *engine.Engine, opts Options) *Service {
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Service{eng: eng, mem: opts.Allocator, log: opts.Logger, limits: newLimits(opts.Limits), acl: opts.ACL}
}
