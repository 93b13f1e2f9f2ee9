package protocol

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/fluxgate-io/fluxgate/errs"
)

// The DoAction bodies and answers of PROTOCOL.md §3, in the order of its
// table. Offsets that the server validates (undo, producer offsets) keep
// their bucket keys as sent, so that BucketOffsets can refuse a bucket
// spelled twice; answers use bucket numbers.

// The actions, by name.
const (
	ActionCreateDatabase          = "create-database"
	ActionDropDatabase            = "drop-database"
	ActionListDatabases           = "list-databases"
	ActionCreateTable             = "create-table"
	ActionDropTable               = "drop-table"
	ActionDescribeTable           = "describe-table"
	ActionListTables              = "list-tables"
	ActionAlterTable              = "alter-table"
	ActionListOffsets             = "list-offsets"
	ActionLakeSnapshot            = "lake-snapshot"
	ActionTierNow                 = "tier-now"
	ActionCompactLake             = "compact-lake"
	ActionUndo                    = "undo"
	ActionRegisterProducerOffsets = "register-producer-offsets"
	ActionGetProducerOffsets      = "get-producer-offsets"
	ActionDeleteProducerOffsets   = "delete-producer-offsets"
	ActionWriterState             = "writer-state"
	ActionTableStats              = "table-stats"
	ActionGrant                   = "grant"
	ActionRevoke                  = "revoke"
	ActionListGrants              = "list-grants"
	ActionCreatePartition         = "create-partition"
	ActionDropPartition           = "drop-partition"
	ActionListPartitions          = "list-partitions"
)

// Action is one DoAction: its name, what it does, and the types of its body
// and its answer. The server's handlers, ListActions' descriptions and
// schema.json's "actions" all come from Actions.
type Action struct {
	Name    string
	Summary string // what the action does, without its fields
	Body    reflect.Type
	Answer  reflect.Type
}

// Actions are every action, in the order of PROTOCOL.md §3's table. Adding
// one adds a row here, its body and answer types, a handler in flight, an
// engine method and its line in PROTOCOL.md.
var Actions = []Action{
	{ActionCreateDatabase, "create a database", typeOf[CreateDatabaseRequest](), typeOf[DatabaseResult]()},
	{ActionDropDatabase, "drop a database", typeOf[DropDatabaseRequest](), typeOf[Empty]()},
	{ActionListDatabases, "list the databases, a page at a time", typeOf[ListDatabasesRequest](), typeOf[ListDatabasesResult]()},
	{ActionCreateTable, "create a table", typeOf[CreateTableRequest](), typeOf[TableInfo]()},
	{ActionDropTable, "drop a table and its data", typeOf[DropTableRequest](), typeOf[Empty]()},
	{ActionDescribeTable, "describe a table", typeOf[TableRequest](), typeOf[TableInfo]()},
	{ActionListTables, "list tables (of a database, or all), a page at a time", typeOf[ListTablesRequest](), typeOf[ListTablesResult]()},
	{ActionAlterTable, "change alterable options and add columns", typeOf[AlterTableRequest](), typeOf[TableInfo]()},
	{ActionListOffsets, `offsets per bucket at "earliest", "latest" or {"timestamp": ms}`, typeOf[OffsetsRequest](), typeOf[OffsetsResult]()},
	{ActionLakeSnapshot, "the latest lake snapshot of a table", typeOf[TableRequest](), typeOf[LakeSnapshot]()},
	{ActionTierNow, "run one tiering round of a lake-enabled table now", typeOf[TableRequest](), typeOf[LakeSnapshot]()},
	{ActionCompactLake, "compact a lake-enabled table's lake now", typeOf[TableRequest](), typeOf[LakeCompaction]()},
	{ActionUndo, "restore a primary-key table to per-bucket offsets", typeOf[UndoRequest](), typeOf[UndoResult]()},
	{ActionRegisterProducerOffsets, `store a producer's starting offsets unless stored: "created" or "already_exists"`, typeOf[ProducerOffsetsRequest](), typeOf[RegisterResult]()},
	{ActionGetProducerOffsets, "a producer's registered offsets, {} if none", typeOf[ProducerOffsetsRequest](), typeOf[ProducerOffsets]()},
	{ActionDeleteProducerOffsets, "forget a producer's registered offsets", typeOf[ProducerOffsetsRequest](), typeOf[Empty]()},
	{ActionWriterState, "where an idempotent writer goes on (0: unknown or expired)", typeOf[WriterStateRequest](), typeOf[WriterState]()},
	{ActionTableStats, "a table's rows without reading them", typeOf[TableStatsRequest](), typeOf[TableStats]()},
	{ActionGrant, `admins: grant operations (database "*": all)`, typeOf[Grant](), typeOf[Empty]()},
	{ActionRevoke, "admins: revoke operations", typeOf[Grant](), typeOf[Empty]()},
	{ActionListGrants, "admins: list grants, a page at a time", typeOf[ListGrantsRequest](), typeOf[ListGrantsResult]()},
	{ActionCreatePartition, "create a partition of a partitioned table", typeOf[CreatePartitionRequest](), typeOf[PartitionInfo]()},
	{ActionDropPartition, "drop a partition and its data", typeOf[DropPartitionRequest](), typeOf[Empty]()},
	{ActionListPartitions, "list a partitioned table's partitions, a page at a time", typeOf[ListPartitionsRequest](), typeOf[ListPartitionsResult]()},
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// Description is the action's line in ListActions: its summary, then its
// body and answer by their names in schema.json, with their fields unless
// there are too many for one line.
func (a Action) Description() string {
	return a.Summary + "; body " + typeSummary(a.Body) + ", answer " + typeSummary(a.Answer)
}

func typeSummary(t reflect.Type) string {
	fields := WireFields(t)
	if len(fields) > 6 {
		return t.Name()
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return t.Name() + " {" + strings.Join(names, ", ") + "}"
}

// WireField is one JSON member of a wire type.
type WireField struct {
	Name      string
	Type      reflect.Type
	Omittable bool         // omitempty or omitzero: absent when zero
	Owner     reflect.Type // the struct that declares it (an embedded one's)
}

// WireFields lists a struct's JSON members in encoding order, those of
// embedded structs in their place.
func WireFields(t reflect.Type) []WireField {
	var out []WireField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			out = append(out, WireFields(f.Type)...)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		omit := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		out = append(out, WireField{Name: name, Type: f.Type, Omittable: omit, Owner: t})
	}
	return out
}

// Empty is the answer of the actions that return nothing: {}.
type Empty struct{}

// TableRequest is the body of describe-table, lake-snapshot, tier-now and
// compact-lake.
type TableRequest struct {
	Table string `json:"table"`
}

// CreateDatabaseRequest is the body of create-database.
type CreateDatabaseRequest struct {
	Database    string `json:"database"`
	IfNotExists bool   `json:"if_not_exists,omitempty"`
}

// DatabaseResult is the answer of create-database.
type DatabaseResult struct {
	Database string `json:"database"`
}

// DropDatabaseRequest is the body of drop-database.
type DropDatabaseRequest struct {
	Database string `json:"database"`
	IfExists bool   `json:"if_exists,omitempty"`
	Cascade  bool   `json:"cascade,omitempty"`
}

// PageRequest is the paging part of a listing's body (list-databases,
// list-tables, list-grants).
type PageRequest struct {
	MaxResults int    `json:"max_results,omitempty"` // 0: no count limit
	PageToken  string `json:"page_token,omitempty"`
}

// ListDatabasesRequest is the body of list-databases.
type ListDatabasesRequest struct {
	PageRequest
}

// ListDatabasesResult is one page of list-databases.
type ListDatabasesResult struct {
	Databases     []string `json:"databases"`
	NextPageToken string   `json:"next_page_token,omitempty"` // "" on the last page
}

// CreateTableRequest is the body of create-table.
type CreateTableRequest struct {
	TableSpec
	IfNotExists bool `json:"if_not_exists,omitempty"`
}

// DropTableRequest is the body of drop-table.
type DropTableRequest struct {
	Table    string `json:"table"`
	IfExists bool   `json:"if_exists,omitempty"`
}

// ListTablesRequest is the body of list-tables; no database lists every one.
type ListTablesRequest struct {
	Database string `json:"database,omitempty"`
	PageRequest
}

// ListTablesResult is one page of list-tables.
type ListTablesResult struct {
	Tables        []TableInfo `json:"tables"`
	NextPageToken string      `json:"next_page_token,omitempty"`
}

// AlterTableRequest is the body of alter-table.
type AlterTableRequest struct {
	Table      string            `json:"table"`
	Set        map[string]string `json:"set,omitempty"`
	Reset      []string          `json:"reset,omitempty"`
	AddColumns []Column          `json:"add_columns,omitempty"`
}

// OffsetsRequest is the body of list-offsets. At is "earliest", "latest"
// (absent) or {"timestamp": ms}.
type OffsetsRequest struct {
	Table   string          `json:"table"`
	At      json.RawMessage `json:"at,omitempty"`
	Buckets []int           `json:"buckets,omitempty"` // nil: all
	// Partitions of a partitioned table, by name; nil: all.
	Partitions []string `json:"partitions,omitempty"`
}

// UnmarshalJSON decodes strictly and checks the form of "at".
func (r *OffsetsRequest) UnmarshalJSON(b []byte) error {
	type plain OffsetsRequest // without this method
	if err := strictUnmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	_, err := decodeIn(r.At, atRole)
	return err
}

// OffsetsResult is the answer of list-offsets.
type OffsetsResult struct {
	Offsets          map[int]int64    `json:"offsets,omitzero"`
	PartitionOffsets PartitionOffsets `json:"partition_offsets,omitzero"` // instead, on a partitioned table
}

// LakeSnapshot is the answer of lake-snapshot and tier-now.
type LakeSnapshot struct {
	SnapshotID int64         `json:"snapshot_id"`
	Offsets    map[int]int64 `json:"offsets,omitzero"` // bucket → next offset not in the lake
	// PartitionOffsets replaces Offsets on a partitioned table.
	PartitionOffsets PartitionOffsets `json:"partition_offsets,omitzero"`
	CommittedAt      int64            `json:"committed_at"` // epoch milliseconds
	// RoundFailure says why the table's tiering rounds fail, while they
	// do: the lake stays at this snapshot (lake-snapshot only).
	RoundFailure *RoundFailure `json:"round_failure,omitempty"`
}

// RoundFailure is why a table's tiering rounds fail, since when.
type RoundFailure struct {
	Message string `json:"message"`
	Since   int64  `json:"since"` // epoch milliseconds: the first failed round of the streak
}

// LakeCompaction is the answer of compact-lake: the snapshot after it and
// what it did.
type LakeCompaction struct {
	LakeSnapshot
	RewrittenFiles     int `json:"rewritten_files"`
	AddedFiles         int `json:"added_files"`
	RemovedDeleteFiles int `json:"removed_delete_files"`
	OrphansDeleted     int `json:"orphans_deleted"`
}

// UndoRequest is the body of undo (PROTOCOL.md §5.4): the buckets to undo,
// each with its offset.
type UndoRequest struct {
	Table   string           `json:"table"`
	Offsets map[string]int64 `json:"offsets,omitempty"`
	// PartitionOffsets replaces Offsets on a partitioned table.
	PartitionOffsets RawPartitionOffsets `json:"partition_offsets,omitempty"`
}

// UndoResult is the answer of undo.
type UndoResult struct {
	UndoneKeys int64         `json:"undone_keys"`
	Offsets    map[int]int64 `json:"offsets,omitzero"` // each named bucket's log end offset after the undo
	// PartitionOffsets replaces Offsets on a partitioned table.
	PartitionOffsets PartitionOffsets `json:"partition_offsets,omitzero"`
}

// ProducerOffsetsRequest is the body of register-producer-offsets,
// get-producer-offsets and delete-producer-offsets (PROTOCOL.md §5.4);
// Offsets only in the first.
type ProducerOffsetsRequest struct {
	ProducerID string           `json:"producer_id"`
	Table      string           `json:"table"`
	Offsets    map[string]int64 `json:"offsets,omitempty"`
	// PartitionOffsets replaces Offsets on a partitioned table.
	PartitionOffsets RawPartitionOffsets `json:"partition_offsets,omitempty"`
}

// The answers of register-producer-offsets.
const (
	RegisterCreated       = "created"
	RegisterAlreadyExists = "already_exists"
)

// RegisterResult is the answer of register-producer-offsets.
type RegisterResult struct {
	Result string `json:"result"` // RegisterCreated or RegisterAlreadyExists
}

// ProducerOffsets is the answer of get-producer-offsets: {} when none are
// registered.
type ProducerOffsets struct {
	Offsets          map[int]int64    `json:"offsets,omitempty"`
	PartitionOffsets PartitionOffsets `json:"partition_offsets,omitempty"` // of a partitioned table
}

// WriterStateRequest is the body of writer-state.
type WriterStateRequest struct {
	Table    string `json:"table"`
	WriterID string `json:"writer_id"`
}

// WriterState is the answer of writer-state.
type WriterState struct {
	// NextSequence is one past the writer's last applied batch, 0 for a
	// writer unknown or expired (PROTOCOL.md §5.3).
	NextSequence int64 `json:"next_sequence"`
}

// Grant is the body of grant and revoke, and an item of list-grants.
type Grant struct {
	Principal  string   `json:"principal"`
	Database   string   `json:"database"`        // "*": every database
	Table      string   `json:"table,omitempty"` // "": the whole database
	Operations []string `json:"operations"`
}

// ListGrantsRequest is the body of list-grants; no principal lists all.
type ListGrantsRequest struct {
	Principal string `json:"principal,omitempty"`
	PageRequest
}

// ListGrantsResult is one page of list-grants.
type ListGrantsResult struct {
	Grants        []Grant `json:"grants"`
	NextPageToken string  `json:"next_page_token,omitempty"`
}

// Command is a CMD descriptor (PROTOCOL.md §4.1, §5, §6): exactly one field
// is set.
type Command struct {
	Scan   *ScanRequest   `json:"scan,omitempty"`
	Write  *WriteRequest  `json:"write,omitempty"`
	Lookup *LookupRequest `json:"lookup,omitempty"`
}

// DecodeCommand decodes a CMD descriptor strictly and checks that it holds
// exactly one request.
func DecodeCommand(b []byte) (Command, error) {
	var c Command
	if err := DecodeJSON(b, "descriptor command", &c); err != nil {
		return c, err
	}
	n := 0
	for _, set := range []bool{c.Scan != nil, c.Write != nil, c.Lookup != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return c, errs.New(errs.InvalidArgument, `descriptor command: want exactly one of "scan", "write" or "lookup"`)
	}
	return c, nil
}
