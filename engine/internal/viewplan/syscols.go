package viewplan

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// System columns of the $changelog view: protocol's, by the names the
// engine's rooms use.
const (
	ColChangeType      = protocol.ColChangeType
	ColLogOffset       = protocol.ColLogOffset
	ColCommitTimestamp = protocol.ColCommitTimestamp
)

// ChangelogFields are the $changelog view's system columns, before the table's.
var ChangelogFields = []arrow.Field{
	{Name: ColChangeType, Type: arrow.BinaryTypes.String},
	{Name: ColLogOffset, Type: arrow.PrimitiveTypes.Int64},
	{Name: ColCommitTimestamp, Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
}
