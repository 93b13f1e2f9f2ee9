package logwrite

import (
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/otel/metric"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/pkwrite"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
)

const colChangeType = viewplan.ColChangeType

// Env is what the write path uses of the engine; the engine builds it once.
type Env struct {
	Alloc   memory.Allocator
	PK      *pkwrite.Env // a primary-key table's batches go through it
	Metrics Metrics
	// Partition returns the open partition of a partitioned table with
	// values, created if missing and create is set: the engine's routing.
	Partition func(info *catalog.TableInfo, values []string, create bool) (*table.Table, *catalog.Partition, error)
}

// Metrics are the engine's instruments a write records, per table.
type Metrics struct {
	Rows  metric.Int64Counter // rows appended
	Bytes metric.Int64Counter // encoded bytes appended to the log
	Table func(name string) metric.MeasurementOption
}
