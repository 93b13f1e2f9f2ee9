package engine

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// System columns of the $changelog view (PROTOCOL.md §4.5).
const (
	ColChangeType      = viewplan.ColChangeType
	ColLogOffset       = viewplan.ColLogOffset
	ColCommitTimestamp = viewplan.ColCommitTimestamp
)

// ScanPlan is a planned scan: the result schema and one ticket per endpoint.
type ScanPlan struct {
	Schema         *arrow.Schema
	Tickets        []protocol.Ticket
	TotalRecords   int64 // -1 when unknown
	TableID        int64
	SchemaID       int32
	Buckets        int
	LakeSnapshotID *int64
	// Partitions are the planned partitions of a partitioned table, in name
	// order; nil for a table that is not partitioned.
	Partitions []protocol.PartitionInfo
}

// ticketRanges is a ticket's ranges: its own, then those of Then.
func ticketRanges(tk protocol.Ticket) []protocol.TicketRange {
	first := protocol.TicketRange{PartitionID: tk.PartitionID, Partition: tk.Partition, Bucket: tk.Bucket, Start: tk.Start, Stop: tk.Stop}
	return append([]protocol.TicketRange{first}, tk.Then...)
}
