package protocol

// WriteRequest is the {"write": ...} command of DoPut (PROTOCOL.md §5).
type WriteRequest struct {
	Table string `json:"table"`
	// Mode is one of the Mode constants; empty for the table's default:
	// append to a log table, upsert of whole rows to a primary-key table.
	Mode string `json:"mode,omitempty"`
	// Columns, when set, makes the write a partial update of these columns.
	Columns   []string `json:"columns,omitempty"`
	MergeMode string   `json:"merge_mode,omitempty"` // MergeDefault or MergeOverwrite
	// WriterID and FirstSequence make the writes idempotent: batch i of the
	// stream has sequence FirstSequence+i.
	WriterID      string `json:"writer_id,omitempty"`
	FirstSequence int64  `json:"first_sequence,omitempty"`
	// CreatePartitions false makes a row of a missing partition fail the
	// batch; nil or true creates the partition.
	CreatePartitions *bool `json:"create_partitions,omitempty"`
}

// The write modes.
const (
	ModeAppend    = "append"
	ModeUpsert    = "upsert"
	ModeDelete    = "delete"
	ModeChangelog = "changelog"
)

// The merge modes.
const (
	MergeDefault   = "default"
	MergeOverwrite = "overwrite"
)

// PutResult is the app_metadata of DoPut's acknowledgement of one batch
// (PROTOCOL.md §5): the batch is applied and durable.
type PutResult struct {
	// Sequence is the batch's sequence number: first_sequence + i with a
	// writer id, else the stream's batch count from 0.
	Sequence int64 `json:"sequence"`
	Rows     int64 `json:"rows"`
	// Buckets maps each bucket the batch touched to its log end offset after
	// the batch; {} for a batch without rows. Nil on a partitioned table.
	Buckets map[int]int64 `json:"buckets,omitzero"`
	// PartitionOffsets replaces Buckets on a partitioned table.
	PartitionOffsets PartitionOffsets `json:"partition_offsets,omitzero"`
}
