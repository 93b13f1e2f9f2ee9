package client

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/fluxgate-io/fluxgate/sqltype"
)

// ArrowType returns the Arrow type on the wire of a Flink SQL type name
// (PROTOCOL.md §2, case-insensitive): VARCHAR(n) and CHAR(n) are utf8,
// TIMESTAMP(p) a zoneless timestamp with its unit chosen by p (default 6),
// TIMESTAMP_LTZ(p) the same with zone "UTC", DECIMAL(p,s) decimal128(p,s),
// ARRAY<t>, MAP<k,v> and ROW<name t, ...> list, map and struct. It parses as
// the server does (package sqltype).
func ArrowType(sqlType string) (arrow.DataType, error) {
	t, err := sqltype.Parse(sqlType)
	if err != nil {
		return nil, err
	}
	return t.Arrow(), nil
}

// ArrowSchema returns the Arrow schema of the table's columns, as the server
// sends and expects them.
func (t *TableInfo) ArrowSchema() (*arrow.Schema, error) { return t.TableSpec.ArrowSchema() }

// ArrowSchema returns the Arrow schema of the spec's columns. Primary-key
// columns are not nullable.
func (s *TableSpec) ArrowSchema() (*arrow.Schema, error) {
	pk := map[string]bool{}
	for _, k := range s.PrimaryKey {
		pk[k] = true
	}
	fields := make([]arrow.Field, len(s.Columns))
	for i, c := range s.Columns {
		dt, err := ArrowType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: dt, Nullable: !c.NotNull && !pk[c.Name]}
	}
	return arrow.NewSchema(fields, nil), nil
}
