package protocol

import (
	"strings"
	"testing"
)

func TestCheckShapeDuplicateKeys(t *testing.T) {
	for _, c := range []struct {
		in, dup string // dup: "" when the JSON names no key twice
	}{
		{`{"a": 1, "b": 2}`, ""},
		{`[{"a": 1}, {"a": 2}]`, ""},
		{`{"a": {"b": 1}, "b": [{"b": 2}, {"b": 3}], "c": {}}`, ""},
		{`{"a": [[{"x": 1}], {"x": 2}], "x": {"a": []}}`, ""},
		{`"just a string"`, ""},
		{`{"a": 1, "a": 2}`, `key "a" appears twice in $`},
		{`{"a": {"b": [1, 2], "c": null, "b": 3}}`, `key "b" appears twice in $.a`},
		{`{"s": [{"k": 1}, {"k": 1, "k": 2}]}`, `key "k" appears twice in $.s[]`},
		{`{"a": [{}], "b": {"c": 1, "c": 1}}`, `key "c" appears twice in $.b`},
		{`{"a": "\u0061", "\u0061": 2}`, `key "a" appears twice`},
	} {
		err := checkShape([]byte(c.in))
		switch {
		case c.dup == "" && err != nil:
			t.Errorf("%s: %v", c.in, err)
		case c.dup != "" && (err == nil || !strings.Contains(err.Error(), c.dup)):
			t.Errorf("%s: %v, want %q", c.in, err, c.dup)
		}
	}
}
