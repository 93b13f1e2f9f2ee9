package engine

import (
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// Views a ticket can read.
const (
	ViewLog       = "log"
	ViewChangelog = "changelog"
	ViewSnapshot  = "snapshot"
	ViewLake      = "lake"
	ViewUnion     = "union"
	ViewLookup    = "lookup" // an inline lookup (PROTOCOL.md §6.3)
)

// System columns of the $changelog view (PROTOCOL.md §4.5).
const (
	ColChangeType      = "_change_type"
	ColLogOffset       = "_log_offset"
	ColCommitTimestamp = "_commit_timestamp"
)

var changelogFields = []arrow.Field{
	{Name: ColChangeType, Type: arrow.BinaryTypes.String},
	{Name: ColLogOffset, Type: arrow.PrimitiveTypes.Int64},
	{Name: ColCommitTimestamp, Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
}

// Ticket is a self-contained read of one bucket's range (PROTOCOL.md §4.3).
// Any server of the same data directory can redeem it, and clients may build
// one themselves.
type Ticket struct {
	V              int             `json:"v"`
	TableID        int64           `json:"table_id"`
	Table          string          `json:"table"`
	View           string          `json:"view"`
	Bucket         int             `json:"bucket"`
	Start          int64           `json:"start"`
	Stop           *int64          `json:"stop"`
	Columns        []string        `json:"columns"`
	Filter         json.RawMessage `json:"filter,omitempty"`
	LakeSnapshotID *int64          `json:"lake_snapshot_id"`
	Limit          *int64          `json:"limit"`
	// Then lists further bucket ranges that the same stream reads in turn, so
	// that a limited scan is one endpoint.
	Then        []TicketRange `json:"then,omitempty"`
	Compression string        `json:"compression,omitempty"`
	// Snapshot makes a changelog ticket start with the bucket's current rows,
	// as inserts, and go on from the offset they were taken at.
	Snapshot bool `json:"snapshot,omitempty"`
	// LakeStart makes a lake or union ticket skip the lake rows below this
	// offset, so that a reader resumes inside the lake part.
	LakeStart *int64 `json:"lake_start,omitempty"`
	// Lookup is the lookup of a lookup ticket.
	Lookup *protocol.LookupRequest `json:"lookup,omitempty"`
}

// TicketRange is one bucket's range of a ticket.
type TicketRange struct {
	Bucket int    `json:"bucket"`
	Start  int64  `json:"start"`
	Stop   *int64 `json:"stop"`
}

// ranges lists the ticket's bucket ranges in reading order.
func (tk *Ticket) ranges() []TicketRange {
	return append([]TicketRange{{Bucket: tk.Bucket, Start: tk.Start, Stop: tk.Stop}}, tk.Then...)
}

// ScanPlan is a planned scan: the result schema and one ticket per endpoint.
type ScanPlan struct {
	Schema         *arrow.Schema
	Tickets        []Ticket
	TotalRecords   int64 // -1 when unknown
	TableID        int64
	SchemaID       int32
	Buckets        int
	LakeSnapshotID *int64
}
