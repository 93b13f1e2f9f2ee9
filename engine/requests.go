package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fluxgate-io/fluxgate/errs"
)

// ScanRequest is a read of a table or view (PROTOCOL.md §4.2).
type ScanRequest struct {
	Table       string          `json:"table"`
	Columns     []string        `json:"columns,omitempty"`
	Filter      json.RawMessage `json:"filter,omitempty"`
	Startup     Startup         `json:"startup,omitzero"`
	Stop        Stop            `json:"stop,omitzero"`
	Buckets     []int           `json:"buckets,omitempty"`
	Limit       *int64          `json:"limit,omitempty"`
	Compression string          `json:"compression,omitempty"`
}

// StartupMode is where a scan starts.
type StartupMode string

const (
	StartFull      StartupMode = "full"
	StartEarliest  StartupMode = "earliest"
	StartLatest    StartupMode = "latest"
	StartTimestamp StartupMode = "timestamp"
	StartOffsets   StartupMode = "offsets"
)

// Startup is `"full"`, `"earliest"`, `"latest"`, `{"timestamp": ms}` or
// `{"offsets": {"bucket": offset}}`. The zero value means the view's default.
type Startup struct {
	Mode      StartupMode
	Timestamp int64
	Offsets   map[int]int64
}

func (s Startup) IsZero() bool { return s.Mode == "" }

func (s *Startup) UnmarshalJSON(b []byte) error {
	var mode string
	if json.Unmarshal(b, &mode) == nil {
		switch m := StartupMode(mode); m {
		case StartFull, StartEarliest, StartLatest:
			s.Mode = m
			return nil
		}
		return errs.New(errs.Invalid, `startup %.64q: want "full", "earliest", "latest", {"timestamp": ms} or {"offsets": {...}}`, mode)
	}
	var obj struct {
		Timestamp *int64           `json:"timestamp"`
		Offsets   map[string]int64 `json:"offsets"`
	}
	if err := strictUnmarshal(b, &obj); err != nil {
		return errs.New(errs.Invalid, "startup: %v", err)
	}
	switch {
	case obj.Timestamp != nil && obj.Offsets == nil:
		if *obj.Timestamp < 0 {
			return errs.New(errs.Invalid, "startup timestamp %d is negative", *obj.Timestamp)
		}
		s.Mode, s.Timestamp = StartTimestamp, *obj.Timestamp
	case obj.Offsets != nil && obj.Timestamp == nil:
		offs, err := bucketOffsets(obj.Offsets, "startup offsets")
		if err != nil {
			return err
		}
		s.Mode, s.Offsets = StartOffsets, offs
	default:
		return errs.New(errs.Invalid, `startup: want exactly one of "timestamp" or "offsets"`)
	}
	return nil
}

func (s Startup) MarshalJSON() ([]byte, error) {
	switch s.Mode {
	case StartTimestamp:
		return json.Marshal(map[string]int64{"timestamp": s.Timestamp})
	case StartOffsets:
		return json.Marshal(map[string]map[int]int64{"offsets": s.Offsets})
	}
	return json.Marshal(string(s.Mode))
}

// Stop is `"latest"` (bounded at the high watermark when planned), `"none"`
// (unbounded) or `{"offsets": {...}}`. The zero value means "latest".
type Stop struct {
	None    bool
	Offsets map[int]int64
}

func (s Stop) IsZero() bool { return !s.None && s.Offsets == nil }

func (s *Stop) UnmarshalJSON(b []byte) error {
	var mode string
	if json.Unmarshal(b, &mode) == nil {
		switch mode {
		case "latest":
			return nil
		case "none":
			s.None = true
			return nil
		}
		return errs.New(errs.Invalid, `stop %.64q: want "latest", "none" or {"offsets": {...}}`, mode)
	}
	var obj struct {
		Offsets map[string]int64 `json:"offsets"`
	}
	if err := strictUnmarshal(b, &obj); err != nil || obj.Offsets == nil {
		return errs.New(errs.Invalid, `stop: want "latest", "none" or {"offsets": {...}}`)
	}
	offs, err := bucketOffsets(obj.Offsets, "stop offsets")
	s.Offsets = offs
	return err
}

func (s Stop) MarshalJSON() ([]byte, error) {
	switch {
	case s.None:
		return json.Marshal("none")
	case s.Offsets != nil:
		return json.Marshal(map[string]map[int]int64{"offsets": s.Offsets})
	}
	return json.Marshal("latest")
}

func bucketOffsets(in map[string]int64, what string) (map[int]int64, error) {
	out := make(map[int]int64, len(in))
	for k, v := range in {
		// Only the canonical spelling: "01" or "+1" would name bucket 1 a
		// second time, one value silently replacing the other.
		b, err := strconv.Atoi(k)
		if err != nil || b < 0 || strconv.Itoa(b) != k {
			return nil, errs.New(errs.Invalid, "%s: %.64q is not a bucket number", what, k)
		}
		if v < 0 {
			return nil, errs.New(errs.Invalid, "%s: offset %d of bucket %d is negative", what, v, b)
		}
		out[b] = v
	}
	return out, nil
}

// WriteRequest describes a write stream (PROTOCOL.md §5).
type WriteRequest struct {
	Table         string   `json:"table"`
	Mode          string   `json:"mode,omitempty"`
	Columns       []string `json:"columns,omitempty"`
	MergeMode     string   `json:"merge_mode,omitempty"`
	WriterID      string   `json:"writer_id,omitempty"`
	FirstSequence int64    `json:"first_sequence,omitempty"`
}

// Write modes.
const (
	ModeAppend    = "append"
	ModeUpsert    = "upsert"
	ModeDelete    = "delete"
	ModeChangelog = "changelog"
)

// OffsetsRequest is the body of list-offsets.
type OffsetsRequest struct {
	Table   string          `json:"table"`
	At      json.RawMessage `json:"at,omitempty"`
	Buckets []int           `json:"buckets,omitempty"`
}

// Compressions are the values of a scan's (and a ticket's) "compression".
var compressions = []string{"none", "lz4_frame", "zstd"}

// checkCompression accepts "" (batches as stored: see
// ReadStream.SendEncoded) and the values of compressions.
func checkCompression(c string) error {
	if c == "" || slices.Contains(compressions, c) {
		return nil
	}
	return errs.New(errs.Invalid, "compression %.64q: want one of %s", c, strings.Join(compressions, ", "))
}

// checkOffsetBuckets refuses startup or stop offsets naming a bucket the
// table does not have, as "buckets" does: a typo must not read from the
// earliest offset instead.
func checkOffsetBuckets(req ScanRequest, table string, buckets int) error {
	for i, offs := range []map[int]int64{req.Startup.Offsets, req.Stop.Offsets} {
		what := [...]string{"startup", "stop"}[i]
		for _, b := range slices.Sorted(maps.Keys(offs)) {
			if b >= buckets {
				return errs.New(errs.Invalid, "%s offsets: bucket %d does not exist: %s has buckets 0 to %d", what, b, table, buckets-1)
			}
		}
	}
	return nil
}

// stopString prints a range's stop, "null" when unbounded.
func (r TicketRange) stopString() string {
	if r.Stop == nil {
		return "null"
	}
	return strconv.FormatInt(*r.Stop, 10)
}

// strictUnmarshal decodes JSON, rejecting unknown fields and trailing data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON object")
	}
	return nil
}

// DecodeJSON decodes client JSON (a command, action body or ticket)
// strictly: an unknown field, a key given twice in one object or malformed
// JSON is errs.Invalid naming what is wrong, so a typo never silently changes
// behaviour.
func DecodeJSON(b []byte, what string, v any) error {
	if err := checkDuplicateKeys(b); err != nil {
		return errs.New(errs.Invalid, "%s: %v", what, err)
	}
	if err := strictUnmarshal(b, v); err != nil {
		if errs.KindOf(err) != errs.Internal {
			return err
		}
		return errs.New(errs.Invalid, "%s: %v", what, err)
	}
	return nil
}

// checkDuplicateKeys refuses an object that names a key twice, at any depth:
// encoding/json would keep the last value silently, where another parser
// might keep the first.
func checkDuplicateKeys(b []byte) error {
	type frame struct {
		keys      map[string]bool // nil for an array
		path      string
		expectKey bool
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers are skipped, not converted
	var stack []*frame
	path := "$"
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // malformed JSON: the decoder that follows says where
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.keys != nil && top.expectKey && tok != json.Delim('}') {
			key := tok.(string) // the tokenizer allows only strings as keys
			if top.keys[key] {
				return fmt.Errorf("key %.64q appears twice in %s", key, top.path)
			}
			top.keys[key], top.expectKey = true, false
			path = top.path + "." + key
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, path: path, expectKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{path: path})
			path += "[]"
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: an object's next token is a key again.
		if len(stack) > 0 {
			if top := stack[len(stack)-1]; top.keys != nil {
				top.expectKey = true
			} else {
				path = top.path + "[]"
			}
		}
	}
}
