// Package scanread sends an opened ticket's rows: log ranges frame by frame
// (decoded ahead when bounded, as stored when they may be), a bucket's state,
// a lake snapshot's rows, each range from its partition's table. The engine
// checks the ticket and resolves its table; scanread reads.
package scanread

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/otel/metric"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/lake"
)

// Env is what reads use of the engine, built once by it.
type Env struct {
	Alloc memory.Allocator
	KV    *kv.Store // the state snapshot reads come from
	// IdleHeartbeat is how long an unbounded read may be idle before it
	// sends an empty batch.
	IdleHeartbeat time.Duration
	Metrics       Metrics

	// Draining is closed when the server starts closing: streams end.
	Draining <-chan struct{}
	// Ready reports whether the server still serves.
	Ready func() bool

	// TicketTable returns the table a ticket's range of partition
	// partitionID (named name) of table id reads.
	TicketTable func(id, partitionID int64, name string) (*table.Table, error)
	// TableByID returns the catalog's table id: the partitioned table a
	// range of a partition only in the lake is of.
	TableByID func(id int64) (*catalog.TableInfo, error)
	// LakeTable opens an open table's lake table.
	LakeTable func(ctx context.Context, t *table.Table) (*lake.Table, error)
	// PartitionedLake opens the lake table of partitioned table info, for
	// a partition only in the lake.
	PartitionedLake func(ctx context.Context, info *catalog.TableInfo) (*lake.Table, error)
}

// Metrics are the scan instruments reads record.
type Metrics struct {
	Scans metric.Int64UpDownCounter // streams being served
	// Read counts rows sent of table, holding bytes of Arrow data.
	Read func(ctx context.Context, table string, rows, bytes int64)
}
