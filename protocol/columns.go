package protocol

// The system columns: names a table's columns may not take, because views,
// lake tables, writes and lookup answers add them.
const (
	// The $changelog view's columns before the table's (PROTOCOL.md §4.5);
	// a changelog write's batches carry ColChangeType too (§5).
	ColChangeType      = "_change_type"
	ColLogOffset       = "_log_offset"
	ColCommitTimestamp = "_commit_timestamp"

	// The columns every lake table ends with (§7.1): the bucket, offset and
	// commit timestamp of the log record that made the row.
	ColBucket    = "__bucket"
	ColOffset    = "__offset"
	ColTimestamp = "__timestamp"

	// KeyIndexColumn is the first column of a lookup answer: the row of the
	// key in the request batch (or the index in an inline lookup's keys).
	KeyIndexColumn = "_key_index"
)

// SystemColumns are all of them.
var SystemColumns = []string{
	ColChangeType, ColLogOffset, ColCommitTimestamp,
	ColBucket, ColOffset, ColTimestamp,
	KeyIndexColumn,
}
