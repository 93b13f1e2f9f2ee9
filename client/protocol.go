package client

// The JSON shapes of PROTOCOL.md: table definitions, action bodies, commands,
// tickets and app_metadata. Field names follow the protocol exactly; the server
// rejects unknown fields, so everything optional is omitted when empty. When
// decoding what the server sends, unknown fields are ignored so that an older
// client keeps working against a newer server.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Column is one column of a table (PROTOCOL.md §2).
type Column struct {
	Name string
	// Type is a Flink SQL type name: BIGINT, DECIMAL(10,2), TIMESTAMP(3), ...
	Type string
	// NotNull marks the column NOT NULL (the protocol's "nullable": false).
	// Primary-key columns are NOT NULL whatever this says.
	NotNull bool
	Comment string
}

type columnJSON struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable *bool  `json:"nullable,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

// MarshalJSON writes "nullable": false only for NOT NULL columns; the protocol
// default is nullable.
func (c Column) MarshalJSON() ([]byte, error) {
	j := columnJSON{Name: c.Name, Type: c.Type, Comment: c.Comment}
	if c.NotNull {
		f := false
		j.Nullable = &f
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a column; a missing "nullable" means nullable.
func (c *Column) UnmarshalJSON(b []byte) error {
	var j columnJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Column{Name: j.Name, Type: j.Type, Comment: j.Comment, NotNull: j.Nullable != nil && !*j.Nullable}
	return nil
}

// TableSpec is a table definition, the body of create-table.
type TableSpec struct {
	Table         string            `json:"table"`
	Columns       []Column          `json:"columns"`
	PrimaryKey    []string          `json:"primary_key,omitempty"`
	PartitionKeys []string          `json:"partition_keys,omitempty"`
	Options       map[string]string `json:"options,omitempty"`
	Comment       string            `json:"comment,omitempty"`
}

// Index is one entry of TableInfo.Indexes: "primary_key" or "prefix".
type Index struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
}

// TableInfo is a table as stored: its spec with every defaulted option filled in,
// plus the server-assigned fields (PROTOCOL.md §3).
type TableInfo struct {
	TableSpec
	TableID   int64       `json:"table_id"`
	SchemaID  int64       `json:"schema_id"`
	CreatedAt EpochMillis `json:"created_at"`
	Kind      string      `json:"kind"` // TableKindLog or TableKindPrimaryKey
	Indexes   []Index     `json:"indexes,omitempty"`
}

// Table kinds (TableInfo.Kind).
const (
	TableKindLog        = "log"
	TableKindPrimaryKey = "primary_key"
)

// HasPrimaryKey reports whether the table is a primary-key table.
func (t *TableInfo) HasPrimaryKey() bool {
	return t.Kind == TableKindPrimaryKey || (t.Kind == "" && len(t.PrimaryKey) > 0)
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

// EpochMillis is a point in time as milliseconds since the Unix epoch. It
// decodes from a JSON number or, leniently, from an RFC 3339 string.
type EpochMillis int64

// Time returns the instant in UTC.
func (m EpochMillis) Time() time.Time { return time.UnixMilli(int64(m)).UTC() }

// UnmarshalJSON accepts a number of milliseconds, an RFC 3339 string or null.
func (m *EpochMillis) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fmt.Errorf("timestamp %q: %w", s, err)
		}
		*m = EpochMillis(t.UnixMilli())
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	if i, err := n.Int64(); err == nil {
		*m = EpochMillis(i)
		return nil
	}
	f, err := n.Float64()
	if err != nil {
		return err
	}
	*m = EpochMillis(int64(f))
	return nil
}

// AlterRequest is the body of alter-table.
type AlterRequest struct {
	Table      string            `json:"table"`
	Set        map[string]string `json:"set,omitempty"`
	Reset      []string          `json:"reset,omitempty"`
	AddColumns []Column          `json:"add_columns,omitempty"`
}

// LakeSnapshot is the result of lake-snapshot and tier-now.
type LakeSnapshot struct {
	SnapshotID  int64         `json:"snapshot_id"`
	Offsets     map[int]int64 `json:"offsets"`
	CommittedAt EpochMillis   `json:"committed_at"`
}

// UndoResult is the result of undo (PROTOCOL.md §5.4).
type UndoResult struct {
	UndoneKeys int64         `json:"undone_keys"`
	Offsets    map[int]int64 `json:"offsets"`
}

// Position names a place in a table's buckets: the startup and stop of a scan
// and the "at" of list-offsets. The zero Position means "the default" and is
// left out of requests.
type Position struct {
	kind    string // "full", "earliest", "latest", "none", "timestamp" or "offsets"
	ts      int64
	offsets map[int]int64
}

// The named positions. Unbounded is the stop of a scan that follows the table
// ("stop": "none").
var (
	Full      = Position{kind: "full"}
	Earliest  = Position{kind: "earliest"}
	Latest    = Position{kind: "latest"}
	Unbounded = Position{kind: "none"}
)

// AtTimestamp is the first batch committed at or after ms (epoch milliseconds).
func AtTimestamp(ms int64) Position { return Position{kind: "timestamp", ts: ms} }

// AtOffsets is a per-bucket offset; for a startup, buckets not named start at
// the earliest offset.
func AtOffsets(offsets map[int]int64) Position {
	m := make(map[int]int64, len(offsets))
	for b, o := range offsets {
		m[b] = o
	}
	return Position{kind: "offsets", offsets: m}
}

// IsZero reports whether p is the default (unset) position.
func (p Position) IsZero() bool { return p.kind == "" }

// IsUnbounded reports whether p is Unbounded.
func (p Position) IsUnbounded() bool { return p.kind == "none" }

// Timestamp returns the timestamp of an AtTimestamp position.
func (p Position) Timestamp() (ms int64, ok bool) { return p.ts, p.kind == "timestamp" }

// Offsets returns the offsets of an AtOffsets position (a copy).
func (p Position) Offsets() (map[int]int64, bool) {
	if p.kind != "offsets" {
		return nil, false
	}
	m := make(map[int]int64, len(p.offsets))
	for b, o := range p.offsets {
		m[b] = o
	}
	return m, true
}

// String returns the position as it appears in JSON.
func (p Position) String() string {
	b, err := p.MarshalJSON()
	if err != nil {
		return "invalid position"
	}
	return strings.Trim(string(b), `"`)
}

// MarshalJSON writes "full", "earliest", "latest", "none", {"timestamp": ms} or
// {"offsets": {"0": n}}; the zero Position is null.
func (p Position) MarshalJSON() ([]byte, error) {
	switch p.kind {
	case "":
		return []byte("null"), nil
	case "full", "earliest", "latest", "none":
		return json.Marshal(p.kind)
	case "timestamp":
		return json.Marshal(map[string]int64{"timestamp": p.ts})
	case "offsets":
		offsets := p.offsets
		if offsets == nil {
			offsets = map[int]int64{}
		}
		return json.Marshal(map[string]map[int]int64{"offsets": offsets})
	}
	return nil, fmt.Errorf("invalid position kind %q", p.kind)
}

// UnmarshalJSON reads any form MarshalJSON writes.
func (p *Position) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*p = Position{}
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "full", "earliest", "latest", "none":
			*p = Position{kind: s}
			return nil
		}
		return fmt.Errorf("position %q: want full, earliest, latest or none", s)
	}
	var obj struct {
		Timestamp *int64        `json:"timestamp"`
		Offsets   map[int]int64 `json:"offsets"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("position %s: %w", b, err)
	}
	switch {
	case obj.Timestamp != nil && obj.Offsets == nil:
		*p = AtTimestamp(*obj.Timestamp)
	case obj.Offsets != nil && obj.Timestamp == nil:
		*p = AtOffsets(obj.Offsets)
	default:
		return fmt.Errorf("position %s: want exactly one of timestamp or offsets", b)
	}
	return nil
}

// ParsePosition parses a position as a person types it: full, earliest,
// latest, none, an epoch-milliseconds timestamp, or JSON ({"timestamp": ms},
// {"offsets": {"0": 12}}, or the bare offsets map {"0": 12}).
func ParsePosition(s string) (Position, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "full", "earliest", "latest", "none":
		return Position{kind: strings.ToLower(s)}, nil
	case "":
		return Position{}, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return AtTimestamp(ms), nil
	}
	if strings.HasPrefix(s, "{") {
		var p Position
		if err := p.UnmarshalJSON([]byte(s)); err == nil {
			return p, nil
		}
		var offsets map[int]int64
		if err := json.Unmarshal([]byte(s), &offsets); err == nil {
			return AtOffsets(offsets), nil
		}
	}
	return Position{}, fmt.Errorf("position %q: want full, earliest, latest, none, epoch milliseconds, {\"timestamp\": ms} or {\"offsets\": {\"bucket\": offset}}", s)
}

// ScanRequest is the {"scan": ...} command of GetFlightInfo (PROTOCOL.md §4.2).
// Zero fields take the server's defaults.
type ScanRequest struct {
	Table   string   `json:"table"`
	Columns []string `json:"columns,omitempty"`
	// Filter is a predicate (PROTOCOL.md §4.4): a json.RawMessage, a map, or
	// anything else that marshals to the predicate's JSON.
	Filter  any      `json:"filter,omitempty"`
	Startup Position `json:"startup,omitzero"`
	Stop    Position `json:"stop,omitzero"` // Latest (the default), Unbounded or AtOffsets
	Buckets []int    `json:"buckets,omitempty"`
	// Limit is the most rows to return in total; 0 means no limit.
	Limit int64 `json:"limit,omitempty"`
	// Compression is the IPC buffer compression of the batches the server
	// sends: "none", "lz4_frame" or "zstd"; empty sends them as stored
	// (a ZSTD table's log batches in ZSTD, the others uncompressed).
	Compression string `json:"compression,omitempty"`
}

// WriteMode is WriteRequest.Mode.
type WriteMode string

// The write modes of PROTOCOL.md §5.
const (
	ModeAppend    WriteMode = "append"
	ModeUpsert    WriteMode = "upsert"
	ModeDelete    WriteMode = "delete"
	ModeChangelog WriteMode = "changelog"
)

// Merge modes (WriteRequest.MergeMode).
const (
	MergeDefault   = "default"
	MergeOverwrite = "overwrite"
)

// WriteRequest is the {"write": ...} command of DoPut (PROTOCOL.md §5).
type WriteRequest struct {
	Table string
	// Mode is empty for the table's default: append to a log table, upsert of
	// whole rows to a primary-key table.
	Mode WriteMode
	// Columns, when set, makes the write a partial update of these columns.
	Columns   []string
	MergeMode string
	// WriterID and FirstSequence make the writes idempotent: batch i of the
	// stream has sequence FirstSequence+i.
	WriterID      string
	FirstSequence int64
}

type writeRequestJSON struct {
	Table         string    `json:"table"`
	Mode          WriteMode `json:"mode,omitempty"`
	Columns       []string  `json:"columns,omitempty"`
	MergeMode     string    `json:"merge_mode,omitempty"`
	WriterID      string    `json:"writer_id,omitempty"`
	FirstSequence *int64    `json:"first_sequence,omitempty"`
}

// MarshalJSON omits empty fields; first_sequence is written whenever
// writer_id is.
func (r WriteRequest) MarshalJSON() ([]byte, error) {
	j := writeRequestJSON{Table: r.Table, Mode: r.Mode, Columns: r.Columns, MergeMode: r.MergeMode, WriterID: r.WriterID}
	if r.WriterID != "" || r.FirstSequence != 0 {
		seq := r.FirstSequence
		j.FirstSequence = &seq
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *WriteRequest) UnmarshalJSON(b []byte) error {
	var j writeRequestJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = WriteRequest{Table: j.Table, Mode: j.Mode, Columns: j.Columns, MergeMode: j.MergeMode, WriterID: j.WriterID}
	if j.FirstSequence != nil {
		r.FirstSequence = *j.FirstSequence
	}
	return nil
}

// onlyTable reports whether r is a plain write that a PATH descriptor expresses.
func (r WriteRequest) onlyTable() bool {
	return r.Mode == "" && len(r.Columns) == 0 && r.MergeMode == "" && r.WriterID == "" && r.FirstSequence == 0
}

// PutResult is the acknowledgement of one written batch (PROTOCOL.md §5): the
// batch is applied and durable.
type PutResult struct {
	// Sequence is the batch's sequence number: first_sequence + i with a
	// writer id, else the stream's batch count from 0. For a batch the Writer
	// split into slices, the sequence of the last slice.
	Sequence int64 `json:"sequence"`
	// Rows is the number of rows written.
	Rows int64 `json:"rows"`
	// Buckets maps each bucket the batch touched to its log end offset after
	// the batch was applied.
	Buckets map[int]int64 `json:"buckets"`
	// Batches is how many stream batches (slices) this result covers; 1 unless
	// the Writer split the record. Not part of the wire format.
	Batches int `json:"-"`
}

// merge folds the result of a later slice of the same record into r.
func (r *PutResult) merge(o PutResult) {
	r.Sequence = o.Sequence
	r.Rows += o.Rows
	r.Batches += o.Batches
	if r.Buckets == nil {
		r.Buckets = map[int]int64{}
	}
	for b, off := range o.Buckets {
		if cur, ok := r.Buckets[b]; !ok || off > cur {
			r.Buckets[b] = off
		}
	}
}

// ParsePutResult parses a PutResult's app_metadata.
func ParsePutResult(appMetadata []byte) (PutResult, error) {
	var r PutResult
	if len(bytes.TrimSpace(appMetadata)) == 0 {
		return r, fmt.Errorf("PutResult without app_metadata")
	}
	if err := json.Unmarshal(appMetadata, &r); err != nil {
		return r, fmt.Errorf("PutResult app_metadata %q: %w", truncate(appMetadata), err)
	}
	r.Batches = 1
	return r, nil
}

// BatchMeta is the app_metadata of a record batch in a scan (PROTOCOL.md §4.3).
type BatchMeta struct {
	Bucket int   `json:"bucket"`
	Start  int64 `json:"start"`
	// Next is the offset to resume this bucket from after this batch: what a
	// connector stores in its checkpoint.
	Next          int64 `json:"next"`
	HighWatermark int64 `json:"high_watermark"`
}

// ParseBatchMeta parses the app_metadata of a scan's FlightData. Empty
// metadata gives the zero BatchMeta and ok false.
func ParseBatchMeta(appMetadata []byte) (m BatchMeta, ok bool, err error) {
	if len(bytes.TrimSpace(appMetadata)) == 0 {
		return m, false, nil
	}
	if err := json.Unmarshal(appMetadata, &m); err != nil {
		return m, false, fmt.Errorf("batch app_metadata %q: %w", truncate(appMetadata), err)
	}
	return m, true, nil
}

// PlanMeta is the app_metadata of a scan's FlightInfo.
type PlanMeta struct {
	TableID  int64 `json:"table_id"`
	SchemaID int64 `json:"schema_id"`
	Buckets  int   `json:"buckets"`
	// LakeSnapshotID is the lake snapshot of a union or lake read, else nil.
	LakeSnapshotID *int64 `json:"lake_snapshot_id"`
}

// Ticket is the JSON ticket of one endpoint (PROTOCOL.md §4.3). Tickets are
// complete in themselves; a client may build one and redeem it with ReadTicket.
type Ticket struct {
	V              int             `json:"v"`
	TableID        int64           `json:"table_id"`
	Table          string          `json:"table"`
	View           string          `json:"view"` // log, changelog, snapshot, lake or union
	Bucket         int             `json:"bucket"`
	Start          int64           `json:"start"`
	Stop           *int64          `json:"stop"` // nil: unbounded
	Columns        []string        `json:"columns,omitempty"`
	Filter         json.RawMessage `json:"filter,omitempty"`
	LakeSnapshotID *int64          `json:"lake_snapshot_id"`
	Limit          *int64          `json:"limit"`
	Compression    string          `json:"compression,omitempty"` // of the batches sent
}

// Encode returns the ticket's bytes.
func (t Ticket) Encode() ([]byte, error) {
	if t.V == 0 {
		t.V = 1
	}
	return json.Marshal(t)
}

// ParseTicket decodes a ticket.
func ParseTicket(b []byte) (Ticket, error) {
	var t Ticket
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("ticket %q: %w", truncate(b), err)
	}
	return t, nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
