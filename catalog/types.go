package catalog

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/sqltype"
)

// ParseType parses a Flink SQL type name (case-insensitive, PROTOCOL.md §2)
// into the Arrow type used on the wire. A bad name is an Invalid error.
func ParseType(s string) (arrow.DataType, error) {
	t, err := parseType(s)
	if err != nil {
		return nil, err
	}
	return t.Arrow(), nil
}

// CanonicalType returns the normalized spelling of a type: upper case, aliases
// resolved and default parameters written out (`timestamp` → `TIMESTAMP(6)`,
// `integer` → `INT`, `decimal` → `DECIMAL(10,0)`). Stored specs use it.
func CanonicalType(s string) (string, error) {
	t, err := parseType(s)
	if err != nil {
		return "", err
	}
	return t.String(), nil
}

// parseType is sqltype.Parse with the error made Invalid: type names come
// from the user.
func parseType(s string) (*sqltype.Type, error) {
	t, err := sqltype.Parse(s)
	if err != nil {
		return nil, errs.New(errs.InvalidArgument, "%w", err)
	}
	return t, nil
}
