package protocol

// TableStatsRequest is the body of table-stats.
type TableStatsRequest struct {
	Table string `json:"table"`
	// Partitions of a partitioned table, by name; nil: all.
	Partitions []string `json:"partitions,omitempty"`
}

// TableStats is the answer of table-stats: the rows of the table's current
// state (a primary-key table) or of its retained log (a log table), in all,
// and per bucket or, of a partitioned table, per partition asked.
type TableStats struct {
	RowCount   int64                     `json:"row_count"`
	Buckets    map[int]int64             `json:"buckets,omitzero"`    // of a table that is not partitioned
	Partitions map[string]PartitionStats `json:"partitions,omitzero"` // of a partitioned one, by name
}

// PartitionStats is a partition's part of TableStats.
type PartitionStats struct {
	RowCount int64         `json:"row_count"`
	Buckets  map[int]int64 `json:"buckets"`
}
