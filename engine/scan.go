package engine

import (
	"github.com/fluxgate-io/fluxgate/engine/internal/scanplan"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
)

// System columns of the $changelog view (PROTOCOL.md §4.5).
const (
	ColChangeType      = viewplan.ColChangeType
	ColLogOffset       = viewplan.ColLogOffset
	ColCommitTimestamp = viewplan.ColCommitTimestamp
)

// ScanPlan is a planned scan: the result schema and one ticket per endpoint.
// An alias: the plan is scanplan's data, handed to flight as it is.
type ScanPlan = scanplan.Plan
