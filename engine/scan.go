package engine

import (
	"strconv"

	"github.com/fluxgate-io/fluxgate/engine/internal/scanplan"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// ScanPlan is a planned scan: the result schema and one ticket per endpoint.
// An alias: the plan is scanplan's data, handed to flight as it is.
type ScanPlan = scanplan.Plan

// ticketRanges is a ticket's ranges: its own, then those of Then.
func ticketRanges(tk protocol.Ticket) []protocol.TicketRange {
	first := protocol.TicketRange{PartitionID: tk.PartitionID, Partition: tk.Partition, Bucket: tk.Bucket, Start: tk.Start, Stop: tk.Stop}
	return append([]protocol.TicketRange{first}, tk.Then...)
}

// stopString prints a range's stop, "null" when unbounded.
func stopString(r protocol.TicketRange) string {
	if r.Stop == nil {
		return "null"
	}
	return strconv.FormatInt(*r.Stop, 10)
}
