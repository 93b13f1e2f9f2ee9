package catalog

import (
	"encoding/json"
	"fmt"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Sizes a table definition may not exceed (PROTOCOL.md §2), in bytes of
// UTF-8. They keep every definition, and so every describe and listing
// answer, far below the 4 MiB a gRPC client accepts by default.
const (
	MaxNameBytes        = protocol.MaxNameLen // a database, table or column name
	MaxCommentBytes     = 4 << 10             // a table's or a column's comment
	MaxOptionKeyBytes   = 256
	MaxOptionValueBytes = 4 << 10
	// MaxDefinitionBytes bounds a whole stored definition (its TableInfo
	// JSON): many columns, each under the limits above, still add up.
	MaxDefinitionBytes = 1 << 20
)

// checkComment refuses a comment over MaxCommentBytes; field names it, as
// `comment` or `column "c" comment`.
func checkComment(table, field, comment string) error {
	if len(comment) > MaxCommentBytes {
		return errs.New(errs.InvalidArgument, "table %s: %s is %d bytes; the limit is %d", table, field, len(comment), MaxCommentBytes)
	}
	return nil
}

// checkOptionSize refuses an option key or value over its limit, before the
// option's own validation quotes it in an error.
func checkOptionSize(table, key, value string) error {
	if len(key) > MaxOptionKeyBytes {
		return errs.New(errs.InvalidArgument, "table %s: option key %.64q... is %d bytes; the limit is %d", table, key, len(key), MaxOptionKeyBytes)
	}
	if len(value) > MaxOptionValueBytes {
		return errs.New(errs.InvalidArgument, "table %s: option %s: value is %d bytes; the limit is %d", table, errs.Quote(key), len(value), MaxOptionValueBytes)
	}
	return nil
}

// checkDefinitionSize refuses a definition whose stored form exceeds
// MaxDefinitionBytes.
func checkDefinitionSize(t *TableInfo) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("table %s: encode definition: %w", t.Table, err)
	}
	if len(b) > MaxDefinitionBytes {
		return errs.New(errs.InvalidArgument, "table %s: the definition (%d columns, %d options) is %d bytes as stored; the limit is %d",
			t.Table, len(t.Columns), len(t.Options), len(b), MaxDefinitionBytes)
	}
	return nil
}
