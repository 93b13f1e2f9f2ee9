package client

// The JSON shapes of PROTOCOL.md are package protocol's; these aliases give
// them the client's names. When decoding what the server sends, unknown
// fields are ignored so that an older client keeps working against a newer
// server.

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// Table definitions (PROTOCOL.md §2, §3).
type (
	Column    = protocol.Column
	TableSpec = protocol.TableSpec
	Index     = protocol.Index
	TableInfo = protocol.TableInfo
)

// Table kinds (TableInfo.Kind).
const (
	TableKindLog        = protocol.KindLog
	TableKindPrimaryKey = protocol.KindPrimaryKey
)

// Action bodies and answers (PROTOCOL.md §3).
type (
	AlterRequest   = protocol.AlterTableRequest
	LakeSnapshot   = protocol.LakeSnapshot
	LakeCompaction = protocol.LakeCompaction
	UndoResult     = protocol.UndoResult
)

// Position names a place in a table's buckets: the startup and stop of a scan
// and the "at" of list-offsets. The zero Position means "the default" and is
// left out of requests.
type Position = protocol.Position

// The named positions. Unbounded is the stop of a scan that follows the table
// ("stop": "none").
var (
	Full      = protocol.Full
	Earliest  = protocol.Earliest
	Latest    = protocol.Latest
	Unbounded = protocol.Unbounded
)

// AtTimestamp is the first batch committed at or after ms (epoch milliseconds).
func AtTimestamp(ms int64) Position { return protocol.AtTimestamp(ms) }

// AtOffsets is a per-bucket offset; for a startup, buckets not named start at
// the earliest offset.
func AtOffsets(offsets map[int]int64) Position { return protocol.AtOffsets(offsets) }

// ParsePosition parses a position as a person types it (protocol.ParsePosition).
func ParsePosition(s string) (Position, error) { return protocol.ParsePosition(s) }

// Commands and their app_metadata (PROTOCOL.md §4, §5).
type (
	ScanRequest  = protocol.ScanRequest
	WriteRequest = protocol.WriteRequest
	BatchMeta    = protocol.BatchMeta
	PlanMeta     = protocol.PlanMeta
	Ticket       = protocol.Ticket
	// WriteMode is WriteRequest.Mode.
	WriteMode = string
)

// The write modes of PROTOCOL.md §5.
const (
	ModeAppend    = protocol.ModeAppend
	ModeUpsert    = protocol.ModeUpsert
	ModeDelete    = protocol.ModeDelete
	ModeChangelog = protocol.ModeChangelog
)

// Merge modes (WriteRequest.MergeMode).
const (
	MergeDefault   = protocol.MergeDefault
	MergeOverwrite = protocol.MergeOverwrite
)

// onlyTable reports whether r is a plain write that a PATH descriptor expresses.
func onlyTable(r WriteRequest) bool {
	return r.Mode == "" && len(r.Columns) == 0 && r.MergeMode == "" && r.WriterID == "" && r.FirstSequence == 0 && r.CreatePartitions == nil
}

// PutResult is the acknowledgement of one written batch (PROTOCOL.md §5): the
// batch is applied and durable. For a record the Writer split into slices,
// Sequence is the last slice's.
type PutResult struct {
	protocol.PutResult
	// Batches is how many stream batches (slices) this result covers; 1 unless
	// the Writer split the record. Not part of the wire format.
	Batches int `json:"-"`
}

// merge folds the result of a later slice of the same record into r.
func (r *PutResult) merge(o PutResult) {
	r.Sequence = o.Sequence
	r.Rows += o.Rows
	r.Batches += o.Batches
	if o.PartitionOffsets != nil { // a partitioned table's
		if r.PartitionOffsets == nil {
			r.PartitionOffsets = protocol.PartitionOffsets{}
		}
		for name, offs := range o.PartitionOffsets {
			if r.PartitionOffsets[name] == nil {
				r.PartitionOffsets[name] = map[int]int64{}
			}
			mergeEnds(r.PartitionOffsets[name], offs)
		}
		return
	}
	if r.Buckets == nil {
		r.Buckets = map[int]int64{}
	}
	mergeEnds(r.Buckets, o.Buckets)
}

// mergeEnds keeps the larger end offset of each bucket.
func mergeEnds(into, from map[int]int64) {
	for b, off := range from {
		if cur, ok := into[b]; !ok || off > cur {
			into[b] = off
		}
	}
}

// ParsePutResult parses a PutResult's app_metadata.
func ParsePutResult(appMetadata []byte) (PutResult, error) {
	var r PutResult
	if len(bytes.TrimSpace(appMetadata)) == 0 {
		return r, fmt.Errorf("PutResult without app_metadata")
	}
	if err := json.Unmarshal(appMetadata, &r.PutResult); err != nil {
		return r, fmt.Errorf("PutResult app_metadata %q: %w", truncate(appMetadata), err)
	}
	r.Batches = 1
	return r, nil
}

// ParseBatchMeta parses the app_metadata of a scan's FlightData. Empty
// metadata gives the zero BatchMeta and ok false.
func ParseBatchMeta(appMetadata []byte) (m BatchMeta, ok bool, err error) {
	if len(bytes.TrimSpace(appMetadata)) == 0 {
		return m, false, nil
	}
	if err := json.Unmarshal(appMetadata, &m); err != nil {
		return m, false, fmt.Errorf("batch app_metadata %q: %w", truncate(appMetadata), err)
	}
	return m, true, nil
}

// ParseTicket decodes a ticket.
func ParseTicket(b []byte) (Ticket, error) {
	var t Ticket
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("ticket %q: %w", truncate(b), err)
	}
	return t, nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
