package client

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// ArrowType returns the Arrow type on the wire of a Flink SQL type name
// (PROTOCOL.md §2, case-insensitive): VARCHAR(n) and CHAR(n) are utf8,
// TIMESTAMP(p) a zoneless timestamp with its unit chosen by p (default 6),
// TIMESTAMP_LTZ(p) the same with zone "UTC", DECIMAL(p,s) decimal128(p,s),
// ARRAY<t>, MAP<k,v> and ROW<name t, ...> list, map and struct. It parses as
// the server does (package sqltype).
func ArrowType(sqlType string) (arrow.DataType, error) { return protocol.ArrowType(sqlType) }
