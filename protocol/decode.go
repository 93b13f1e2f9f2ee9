package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/fluxgate-io/fluxgate/errs"
)

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

// strictUnmarshal decodes JSON, rejecting unknown fields and trailing data.
// A type with its own UnmarshalJSON uses it for its fields too, since
// encoding/json does not pass DisallowUnknownFields down.
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

// BucketOffsets reads a JSON object of bucket → offset. Only the canonical
// spelling of a bucket is accepted: "01" or "+1" would name bucket 1 a second
// time, one value silently replacing the other. what prefixes the errors
// ("undo offsets").
func BucketOffsets(in map[string]int64, what string) (map[int]int64, error) {
	out := make(map[int]int64, len(in))
	for k, v := range in {
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

// BucketKeys spells the buckets of offsets as the JSON keys of the protocol's
// bucket → offset objects.
func BucketKeys(offsets map[int]int64) map[string]int64 {
	if offsets == nil {
		return nil
	}
	out := make(map[string]int64, len(offsets))
	for b, o := range offsets {
		out[strconv.Itoa(b)] = o
	}
	return out
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
