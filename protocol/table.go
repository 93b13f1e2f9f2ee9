package protocol

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/sqltype"
)

// Column is one column of a table definition (PROTOCOL.md §2).
type Column struct {
	Name string `json:"name"`
	// Type is a Flink SQL type name: BIGINT, DECIMAL(10,2), TIMESTAMP(3), ...
	Type string `json:"type"`
	// Nullable nil means nullable, the protocol's default; the server fills
	// it in for every column it stores. Primary-key columns are NOT NULL
	// whatever it says.
	Nullable *bool  `json:"nullable,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

// IsNullable reports whether the column takes NULLs ("nullable" absent or
// true).
func (c Column) IsNullable() bool { return c.Nullable == nil || *c.Nullable }

// TableSpec is a table definition as a client sends it.
type TableSpec struct {
	Table         string            `json:"table"`
	Columns       []Column          `json:"columns"`
	PrimaryKey    []string          `json:"primary_key,omitempty"`
	PartitionKeys []string          `json:"partition_keys,omitempty"`
	Options       map[string]string `json:"options,omitempty"`
	Comment       string            `json:"comment,omitempty"`
}

// Index is a key a table can be looked up by: IndexPrimaryKey or IndexPrefix.
type Index struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
}

// Table kinds (TableInfo.Kind) and index names (Index.Name).
const (
	KindLog        = "log"
	KindPrimaryKey = "primary_key"

	IndexPrimaryKey = "primary_key"
	IndexPrefix     = "prefix"
)

// TableInfo is a table as the server stores and describes it (PROTOCOL.md
// §3): its spec, normalized and with every defaulted option filled in, plus
// what the server assigned. It is flat on the wire.
type TableInfo struct {
	TableSpec
	TableID   int64   `json:"table_id"`
	SchemaID  int32   `json:"schema_id"`
	CreatedAt int64   `json:"created_at"` // epoch milliseconds
	Kind      string  `json:"kind"`       // KindLog or KindPrimaryKey
	Indexes   []Index `json:"indexes"`
}

// HasPrimaryKey reports whether the table is a primary-key table.
func (t *TableInfo) HasPrimaryKey() bool {
	return t.Kind == KindPrimaryKey || (t.Kind == "" && len(t.PrimaryKey) > 0)
}

// AutoIncrementColumns returns the columns named by the auto-increment.fields
// option; writers may not write them.
func (t *TableInfo) AutoIncrementColumns() []string {
	var cols []string
	for _, c := range strings.Split(t.Options["auto-increment.fields"], ",") {
		if c = strings.TrimSpace(c); c != "" {
			cols = append(cols, c)
		}
	}
	return cols
}

// ArrowType returns the Arrow type on the wire of a Flink SQL type name
// (PROTOCOL.md §2, case-insensitive), parsed as the server parses it.
func ArrowType(sqlType string) (arrow.DataType, error) {
	t, err := sqltype.Parse(sqlType)
	if err != nil {
		return nil, err
	}
	return t.Arrow(), nil
}

// ArrowSchema returns the Arrow schema of the spec's columns as the server
// sends and expects them. Primary-key columns are not nullable.
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
		fields[i] = arrow.Field{Name: c.Name, Type: dt, Nullable: c.IsNullable() && !pk[c.Name]}
	}
	return arrow.NewSchema(fields, nil), nil
}
