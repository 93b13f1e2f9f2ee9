package protocol

import (
	"encoding/json"
)

// ScanRequest is the {"scan": ...} command of GetFlightInfo, GetSchema and
// PollFlightInfo (PROTOCOL.md §4.2). Zero fields take the server's defaults.
type ScanRequest struct {
	Table   string   `json:"table"`
	Columns []string `json:"columns,omitempty"` // nil: every column
	// Filter is a predicate (PROTOCOL.md §4.4).
	Filter json.RawMessage `json:"filter,omitempty"`
	// Startup takes full, earliest, latest, a timestamp or offsets; Stop
	// takes latest (the default), none (Unbounded) or offsets.
	Startup Position `json:"startup,omitzero"`
	Stop    Position `json:"stop,omitzero"`
	Buckets []int    `json:"buckets,omitempty"` // nil: all; inside every partition
	// Partitions is a subset of a partitioned table's partitions, by name;
	// nil: all.
	Partitions []string `json:"partitions,omitempty"`
	Limit      *int64   `json:"limit,omitempty"` // most rows in total; nil: no limit
	// Compression is the IPC buffer compression of the batches the server
	// sends: "none", "lz4_frame" or "zstd"; empty sends them as stored.
	Compression string `json:"compression,omitempty"`
}

// UnmarshalJSON decodes strictly and checks that startup and stop take only
// their own forms.
func (r *ScanRequest) UnmarshalJSON(b []byte) error {
	type plain ScanRequest // without this method
	var v struct {
		plain
		Startup json.RawMessage `json:"startup"`
		Stop    json.RawMessage `json:"stop"`
	}
	if err := strictUnmarshal(b, &v); err != nil {
		return err
	}
	startup, err := decodeIn(v.Startup, startupRole)
	if err != nil {
		return err
	}
	stop, err := decodeIn(v.Stop, stopRole)
	if err != nil {
		return err
	}
	*r = ScanRequest(v.plain)
	r.Startup, r.Stop = startup, stop
	return nil
}

// Compressions are the values of a scan's (and a ticket's) "compression".
var Compressions = []string{"none", "lz4_frame", "zstd"}

// Views a ticket can read.
const (
	ViewLog       = "log"
	ViewChangelog = "changelog"
	ViewSnapshot  = "snapshot"
	ViewLake      = "lake"
	ViewUnion     = "union"
	ViewLookup    = "lookup" // an inline lookup (PROTOCOL.md §6.3)
)

// PlanMeta is the app_metadata of a scan's FlightInfo (PROTOCOL.md §4.3).
type PlanMeta struct {
	TableID  int64 `json:"table_id"`
	SchemaID int32 `json:"schema_id"`
	Buckets  int   `json:"buckets"`
	// LakeSnapshotID is the lake snapshot of a union or lake read, else nil.
	LakeSnapshotID *int64 `json:"lake_snapshot_id"`
	// Partitions are the planned partitions of a partitioned table, in name
	// order; absent on a non-partitioned one.
	Partitions []PartitionInfo `json:"partitions,omitzero"`
}

// Ticket is a self-contained read of one bucket's range (PROTOCOL.md §4.3).
// Any server of the same data directory can redeem it, and clients may build
// one themselves.
type Ticket struct {
	V       int    `json:"v"`
	TableID int64  `json:"table_id"`
	Table   string `json:"table"`
	View    string `json:"view"` // one of the View constants
	// PartitionID and Partition name the partition of the bucket, only on a
	// partitioned table.
	PartitionID    int64           `json:"partition_id,omitempty"`
	Partition      string          `json:"partition,omitempty"`
	Bucket         int             `json:"bucket"`
	Start          int64           `json:"start"`
	Stop           *int64          `json:"stop"`    // nil: unbounded
	Columns        []string        `json:"columns"` // nil: every column
	Filter         json.RawMessage `json:"filter,omitempty"`
	LakeSnapshotID *int64          `json:"lake_snapshot_id"`
	Limit          *int64          `json:"limit"`
	// Then lists further bucket ranges that the same stream reads in turn, so
	// that a limited scan is one endpoint.
	Then        []TicketRange `json:"then,omitempty"`
	Compression string        `json:"compression,omitempty"` // of the batches sent
	// Snapshot makes a changelog ticket start with the bucket's current rows,
	// as inserts, and go on from the offset they were taken at.
	Snapshot bool `json:"snapshot,omitempty"`
	// LakeStart makes a lake or union ticket skip the lake rows below this
	// offset, so that a reader resumes inside the lake part.
	LakeStart *int64 `json:"lake_start,omitempty"`
	// Lookup is the lookup of a lookup ticket.
	Lookup *LookupRequest `json:"lookup,omitempty"`
}

// TicketRange is one bucket's range of a ticket.
type TicketRange struct {
	PartitionID int64  `json:"partition_id,omitempty"` // as Ticket's
	Partition   string `json:"partition,omitempty"`
	Bucket      int    `json:"bucket"`
	Start       int64  `json:"start"`
	Stop        *int64 `json:"stop"`
}

// Encode returns the ticket's bytes; a zero V is version 1.
func (t Ticket) Encode() ([]byte, error) {
	if t.V == 0 {
		t.V = 1
	}
	return json.Marshal(t)
}

// BatchMeta is the app_metadata of every record batch a scan sends
// (PROTOCOL.md §4.3).
type BatchMeta struct {
	// PartitionID and Partition, only on a partitioned table.
	PartitionID int64  `json:"partition_id,omitempty"`
	Partition   string `json:"partition,omitempty"`
	Bucket      int    `json:"bucket"`
	Start       int64  `json:"start"`
	// Next is the offset to resume this bucket from after this batch: what a
	// connector stores in its checkpoint.
	Next          int64 `json:"next"`
	HighWatermark int64 `json:"high_watermark"`
	// Snapshot marks the batches of a snapshot (a primary-key table's
	// current rows), which a read cannot resume inside.
	Snapshot bool `json:"snapshot,omitempty"`
}
