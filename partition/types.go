package partition

import "slices"

// supportedRoots are the column types (sqltype roots) a partition key may
// have: Fluss's PARTITION_KEY_SUPPORTED_TYPES, with VARCHAR and VARBINARY
// being this server's spellings of STRING and BYTES of a length.
var supportedRoots = []string{
	"CHAR", "VARCHAR", "STRING", "BOOLEAN", "BINARY", "VARBINARY", "BYTES", "TINYINT", "SMALLINT",
	"INT", "DATE", "TIME", "BIGINT", "FLOAT", "DOUBLE", "TIMESTAMP", "TIMESTAMP_LTZ",
}

// SupportedTypes is Fluss's list of the partition key types, as its messages
// print it.
const SupportedTypes = "[CHAR, STRING, BOOLEAN, BINARY, BYTES, TINYINT, SMALLINT, INTEGER, DATE, " +
	"TIME_WITHOUT_TIME_ZONE, BIGINT, FLOAT, DOUBLE, TIMESTAMP_WITHOUT_TIME_ZONE, TIMESTAMP_WITH_LOCAL_TIME_ZONE]"

// Supported reports whether a column of this sqltype root may be a
// partition key.
func Supported(root string) bool { return slices.Contains(supportedRoots, root) }
