// Package laketier is the engine's lake tier: a table's Iceberg table opened
// into its tier (tier.go), its latest snapshot, the tiering rounds and
// the lake's compaction. The engine builds one Lakes over what the tier uses
// (Env) and keeps the exported actions (tier-now, lake-snapshot,
// compact-lake, the served Iceberg catalog) as thin methods over it; read
// planning and reading ask it for snapshots and lake tables.
package laketier

import (
	"log/slog"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/otel/metric"

	"github.com/fluxgate-io/fluxgate/engine/internal/tables"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/lake"
)

// Env is what the lake tier uses of the engine.
type Env struct {
	Lake               *lake.Lake
	KV                 *kv.Store // a primary-key table's first round reads its state
	Alloc              memory.Allocator
	Logger             *slog.Logger
	Metrics            Metrics
	CompactionInterval time.Duration // how often the scheduler compacts a table's lake
	// Tables are the tables tiered: a partitioned table's partitions, read
	// by its rounds, and the definitions of tables by id.
	Tables *tables.Set
}

// Metrics are the instruments a round records, per table.
type Metrics struct {
	RoundSeconds metric.Float64Histogram
	Files        metric.Int64Counter
	Bytes        metric.Int64Counter
	Rows         metric.Int64Counter
	// RoundFailures counts failed rounds (Failing says why the last one
	// failed).
	RoundFailures metric.Int64Counter
	// Table is the attributes of a table's series (the engine's, so that
	// every room's metrics name a table alike).
	Table func(name string) metric.MeasurementOption
}

// Lakes is the lake tier of an engine's tables.
type Lakes struct {
	env   Env
	tiers tiers
}

// New returns the lake tier over env.
func New(env Env) *Lakes { return &Lakes{env: env} }
