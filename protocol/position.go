package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fluxgate-io/fluxgate/errs"
)

// PositionMode is the kind of a Position.
type PositionMode string

// The position modes. PositionNone is the stop of a scan that follows the
// table ("stop": "none").
const (
	PositionFull      PositionMode = "full"
	PositionEarliest  PositionMode = "earliest"
	PositionLatest    PositionMode = "latest"
	PositionNone      PositionMode = "none"
	PositionTimestamp PositionMode = "timestamp"
	PositionOffsets   PositionMode = "offsets"
	// PositionPartitionOffsets is the offsets form of a partitioned table.
	PositionPartitionOffsets PositionMode = "partition_offsets"
)

// Position names a place in a table's buckets: the startup and the stop of a
// scan (PROTOCOL.md §4.2) and the "at" of list-offsets. On the wire it is
// "full", "earliest", "latest", "none", {"timestamp": ms}, {"offsets":
// {"bucket": offset}} or, on a partitioned table, {"partition_offsets":
// {"name": {"bucket": offset}}}. The zero Position means the default and is left out.
type Position struct {
	Mode      PositionMode
	Timestamp int64         // epoch milliseconds, for PositionTimestamp
	Offsets   map[int]int64 // bucket → offset, for PositionOffsets
	// PartitionOffsets is partition name → bucket → offset, for
	// PositionPartitionOffsets.
	PartitionOffsets PartitionOffsets
}

// The named positions. Unbounded is the stop that follows the table.
var (
	Full      = Position{Mode: PositionFull}
	Earliest  = Position{Mode: PositionEarliest}
	Latest    = Position{Mode: PositionLatest}
	Unbounded = Position{Mode: PositionNone}
)

// AtTimestamp is the first batch committed at or after ms (epoch milliseconds).
func AtTimestamp(ms int64) Position { return Position{Mode: PositionTimestamp, Timestamp: ms} }

// AtOffsets is a per-bucket offset (a copy of offsets); for a startup,
// buckets not named start at the earliest offset.
func AtOffsets(offsets map[int]int64) Position {
	m := make(map[int]int64, len(offsets))
	maps.Copy(m, offsets)
	return Position{Mode: PositionOffsets, Offsets: m}
}

// AtPartitionOffsets is a per-partition, per-bucket offset (a copy of
// offsets) of a partitioned table; for a startup, partitions and buckets not
// named start at the earliest offset, for a stop they end at the latest.
func AtPartitionOffsets(offsets PartitionOffsets) Position {
	return Position{Mode: PositionPartitionOffsets, PartitionOffsets: offsets.Clone()}
}

// IsZero reports whether p is the default (unset) position.
func (p Position) IsZero() bool { return p.Mode == "" }

// IsUnbounded reports whether p is Unbounded.
func (p Position) IsUnbounded() bool { return p.Mode == PositionNone }

// String returns the position as it appears in JSON, without quotes.
func (p Position) String() string {
	b, err := p.MarshalJSON()
	if err != nil {
		return "invalid position"
	}
	return strings.Trim(string(b), `"`)
}

// MarshalJSON writes the wire form; the zero Position is null.
func (p Position) MarshalJSON() ([]byte, error) {
	switch p.Mode {
	case "":
		return []byte("null"), nil
	case PositionFull, PositionEarliest, PositionLatest, PositionNone:
		return json.Marshal(string(p.Mode))
	case PositionTimestamp:
		return json.Marshal(map[string]int64{"timestamp": p.Timestamp})
	case PositionOffsets:
		offsets := p.Offsets
		if offsets == nil {
			offsets = map[int]int64{}
		}
		return json.Marshal(map[string]map[int]int64{"offsets": offsets})
	case PositionPartitionOffsets:
		offsets := p.PartitionOffsets
		if offsets == nil {
			offsets = PartitionOffsets{}
		}
		return json.Marshal(map[string]PartitionOffsets{"partition_offsets": offsets})
	}
	return nil, fmt.Errorf("invalid position mode %q", p.Mode)
}

// UnmarshalJSON reads any form MarshalJSON writes. Where a position may take
// only some forms (a scan's startup and stop, list-offsets' "at") the request
// that holds it checks which.
func (p *Position) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil // as encoding/json does: null leaves the value as it is
	}
	return p.decode(b, anyPosition)
}

// positionRole is where a position stands, and so which forms it takes and
// how its errors read (the messages are the server's, asserted by tests).
type positionRole struct {
	name  string
	modes []PositionMode
	want  string // the forms, for a string that is none of them
	// badObject is the error of an object that is not one of the forms;
	// with uniform, of a malformed object too, and of every error.
	badObject     string
	hideDecodeErr bool // a malformed object is badObject too
	uniform       bool
}

var (
	anyPosition = positionRole{name: "position",
		modes:     []PositionMode{PositionFull, PositionEarliest, PositionLatest, PositionNone, PositionTimestamp, PositionOffsets, PositionPartitionOffsets},
		want:      `"full", "earliest", "latest", "none", {"timestamp": ms} or {"offsets": {...}}`,
		badObject: `want exactly one of "timestamp" or "offsets"`}
	startupRole = positionRole{name: "startup",
		modes:     []PositionMode{PositionFull, PositionEarliest, PositionLatest, PositionTimestamp, PositionOffsets, PositionPartitionOffsets},
		want:      `"full", "earliest", "latest", {"timestamp": ms} or {"offsets": {...}}`,
		badObject: `want exactly one of "timestamp" or "offsets"`}
	stopRole = positionRole{name: "stop",
		modes:     []PositionMode{PositionLatest, PositionNone, PositionOffsets, PositionPartitionOffsets},
		want:      `"latest", "none" or {"offsets": {...}}`,
		badObject: `want "latest", "none" or {"offsets": {...}}`, hideDecodeErr: true}
	atRole = positionRole{name: `list-offsets "at"`,
		modes:     []PositionMode{PositionEarliest, PositionLatest, PositionTimestamp},
		badObject: `want "earliest", "latest" or {"timestamp": ms}`, uniform: true}
)

func (p *Position) decode(b []byte, role positionRole) error {
	err := p.decodeAs(b, role)
	if err != nil && role.uniform {
		return errs.New(errs.InvalidArgument, "%s: %s", role.name, role.badObject)
	}
	return err
}

func (p *Position) decodeAs(b []byte, role positionRole) error {
	var mode string
	if json.Unmarshal(b, &mode) == nil {
		m := PositionMode(mode)
		if m == PositionTimestamp || m == PositionOffsets || m == PositionPartitionOffsets || !slices.Contains(role.modes, m) {
			return errs.New(errs.InvalidArgument, `%s %.64q: want %s`, role.name, mode, role.want)
		}
		*p = Position{Mode: m}
		return nil
	}
	var obj struct {
		Timestamp *int64           `json:"timestamp"`
		Offsets   map[string]int64 `json:"offsets"`
		// PartitionOffsets stands alone like the other two.
		PartitionOffsets RawPartitionOffsets `json:"partition_offsets"`
	}
	if err := strictUnmarshal(b, &obj); err != nil {
		if role.hideDecodeErr {
			return errs.New(errs.InvalidArgument, "%s: %s", role.name, role.badObject)
		}
		return errs.New(errs.InvalidArgument, "%s: %v", role.name, err)
	}
	n := 0
	for _, set := range []bool{obj.Timestamp != nil, obj.Offsets != nil, obj.PartitionOffsets != nil} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return errs.New(errs.InvalidArgument, "%s: %s", role.name, role.badObject)
	case obj.Timestamp != nil && slices.Contains(role.modes, PositionTimestamp):
		if *obj.Timestamp < 0 {
			return errs.New(errs.InvalidArgument, "%s timestamp %d is negative", role.name, *obj.Timestamp)
		}
		*p = AtTimestamp(*obj.Timestamp)
	case obj.Offsets != nil && slices.Contains(role.modes, PositionOffsets):
		offs, err := BucketOffsets(obj.Offsets, role.name+" offsets")
		if err != nil {
			return err
		}
		*p = Position{Mode: PositionOffsets, Offsets: offs}
	case obj.PartitionOffsets != nil && slices.Contains(role.modes, PositionPartitionOffsets):
		offs, err := DecodePartitionOffsets(obj.PartitionOffsets, role.name+" partition_offsets")
		if err != nil {
			return err
		}
		*p = Position{Mode: PositionPartitionOffsets, PartitionOffsets: offs}
	default:
		return errs.New(errs.InvalidArgument, "%s: %s", role.name, role.badObject)
	}
	return nil
}

// decodeIn decodes a request's position field in its role; absent or null
// leaves the zero Position.
func decodeIn(raw json.RawMessage, role positionRole) (Position, error) {
	var p Position
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return p, nil
	}
	return p, p.decode(raw, role)
}

// ParsePosition parses a position as a person types it: full, earliest,
// latest, none, an epoch-milliseconds timestamp, or JSON ({"timestamp": ms},
// {"offsets": {"0": 12}}, or the bare offsets map {"0": 12}).
func ParsePosition(s string) (Position, error) {
	s = strings.TrimSpace(s)
	switch m := PositionMode(strings.ToLower(s)); m {
	case PositionFull, PositionEarliest, PositionLatest, PositionNone:
		return Position{Mode: m}, nil
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
