package protocol

// ActionTableStats answers a table's row count without reading its rows.
const ActionTableStats = "table-stats"

// TableStatsRequest is the body of table-stats.
type TableStatsRequest struct {
	Table string `json:"table"`
}

// TableStats is the answer of table-stats: the rows of the table's current
// state (a primary-key table) or of its retained log (a log table), in all
// and per bucket.
type TableStats struct {
	RowCount int64         `json:"row_count"`
	Buckets  map[int]int64 `json:"buckets"`
}
