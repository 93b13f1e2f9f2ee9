package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// Planning a scan is internal/scanplan's.

// PlanScan validates a scan and fixes its offsets into tickets.
func (e *Engine) PlanScan(ctx context.Context, req protocol.ScanRequest) (*ScanPlan, error) {
	return e.plan.Scan(ctx, req)
}

// ScanSchema returns the result schema of a scan without planning offsets or
// touching data.
func (e *Engine) ScanSchema(req protocol.ScanRequest) (*arrow.Schema, error) {
	return e.plan.Schema(req)
}
