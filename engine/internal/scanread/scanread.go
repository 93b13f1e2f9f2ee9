// Package scanread redeems tickets: it checks a ticket (ticket.go: the one
// place of a ticket's rules), resolves the tables of its ranges and sends
// their rows: log ranges frame by frame (decoded ahead when bounded, as
// stored when they may be), a bucket's state, a lake snapshot's rows, each
// range from its partition's table.
package scanread

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/otel/metric"

	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/engine/internal/tables"
	"github.com/fluxgate-io/fluxgate/kv"
)

// Env is what reads use, built once by the engine.
type Env struct {
	Alloc memory.Allocator
	KV    *kv.Store // the state snapshot reads come from
	// IdleHeartbeat is how long an unbounded read may be idle before it
	// sends an empty batch.
	IdleHeartbeat time.Duration
	Metrics       Metrics

	// Draining is closed when the server starts closing: streams end.
	Draining <-chan struct{}

	Tables *tables.Set     // the tables of a ticket's ranges
	Lakes  *laketier.Lakes // the lake tables lake and union reads read
}

// Metrics are the scan instruments reads record.
type Metrics struct {
	Scans metric.Int64UpDownCounter // streams being served
	// Read counts rows sent of table, holding bytes of Arrow data.
	Read func(ctx context.Context, table string, rows, bytes int64)
}

// draining reports whether the server is closing.
func (env *Env) draining() bool {
	select {
	case <-env.Draining:
		return true
	default:
		return false
	}
}
