package logwrite

import (
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/otel/metric"

	"github.com/fluxgate-io/fluxgate/engine/internal/pkwrite"
	"github.com/fluxgate-io/fluxgate/engine/internal/tables"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

const colChangeType = viewplan.ColChangeType

// Env is what the write path uses of the engine; the engine builds it once.
type Env struct {
	Alloc   memory.Allocator
	Tables  *tables.Set  // the table a write names, a partition its rows are of
	PK      *pkwrite.Env // a primary-key table's batches go through it
	Metrics Metrics
}

// Metrics are the engine's instruments a write records, per table.
type Metrics struct {
	Rows  metric.Int64Counter // rows appended
	Bytes metric.Int64Counter // encoded bytes appended to the log
	Table func(name string) metric.MeasurementOption
}

// Open validates a write request against the table it names and returns
// the stream that applies its batches.
func (env *Env) Open(req protocol.WriteRequest) (*Stream, error) {
	path, err := protocol.ParseTablePath(req.Table)
	if err != nil {
		return nil, err
	}
	if path.View != "" {
		return nil, errs.New(errs.FailedPrecondition, "%s is a read-only view; write to %s", path.FullName(), path)
	}
	info, err := env.Tables.Catalog().Table(path)
	if err != nil {
		return nil, err
	}
	if info.IsPartitioned() {
		return openPartitioned(env, info, req)
	}
	if req.CreatePartitions != nil {
		return nil, errs.New(errs.InvalidArgument, "write to %s: create_partitions applies to partitioned tables only", path)
	}
	t, err := env.Tables.Table(info)
	if err != nil {
		return nil, err
	}
	return openStream(env, t, t.Current(), req)
}
