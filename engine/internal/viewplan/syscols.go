package viewplan

import "github.com/apache/arrow-go/v18/arrow"

// System columns of the $changelog view (PROTOCOL.md §4.5).
const (
	ColChangeType      = "_change_type"
	ColLogOffset       = "_log_offset"
	ColCommitTimestamp = "_commit_timestamp"
)

// ChangelogFields are the $changelog view's system columns, before the table's.
var ChangelogFields = []arrow.Field{
	{Name: ColChangeType, Type: arrow.BinaryTypes.String},
	{Name: ColLogOffset, Type: arrow.PrimitiveTypes.Int64},
	{Name: ColCommitTimestamp, Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
}
