package protocol

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParsePosition(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Position
		json string
	}{
		{"full", Full, `"full"`},
		{"EARLIEST", Earliest, `"earliest"`},
		{"latest", Latest, `"latest"`},
		{"none", Unbounded, `"none"`},
		{"1700000000000", AtTimestamp(1700000000000), `{"timestamp":1700000000000}`},
		{`{"timestamp": 3}`, AtTimestamp(3), `{"timestamp":3}`},
		{`{"offsets": {"0": 12, "1": 40}}`, AtOffsets(map[int]int64{0: 12, 1: 40}), `{"offsets":{"0":12,"1":40}}`},
		{`{"0": 12}`, AtOffsets(map[int]int64{0: 12}), `{"offsets":{"0":12}}`},
	} {
		got, err := ParsePosition(tc.in)
		if err != nil {
			t.Errorf("ParsePosition(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParsePosition(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
		b, err := json.Marshal(got)
		if err != nil || string(b) != tc.json {
			t.Errorf("marshal %#v = %s, %v; want %s", got, b, err, tc.json)
		}
		var back Position
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, got) {
			t.Errorf("round trip of %s: %#v, %v", b, back, err)
		}
	}
	for _, bad := range []string{"soon", "{", `{"timestamp": 1, "offsets": {}}`, `{"x": 1}`, "-", "1.5"} {
		if _, err := ParsePosition(bad); err == nil {
			t.Errorf("ParsePosition(%q) succeeded", bad)
		}
	}
	if !(Position{}).IsZero() || Full.IsZero() || !Unbounded.IsUnbounded() {
		t.Error("IsZero/IsUnbounded")
	}
	if Latest.String() != "latest" {
		t.Errorf("String = %q", Latest.String())
	}
}

// TestNullPositionKeepsValue: null leaves a position as it was, as
// encoding/json does for other types, so a default set before decoding stays.
func TestNullPositionKeepsValue(t *testing.T) {
	p := Latest
	if err := json.Unmarshal([]byte("null"), &p); err != nil || !reflect.DeepEqual(p, Latest) {
		t.Errorf("null: %v, %v", p, err)
	}
}

func TestTableInfoHelpers(t *testing.T) {
	info := TableInfo{TableSpec: TableSpec{Columns: []Column{{Name: "k", Type: "BIGINT", Nullable: new(false)}, {Name: "uid", Type: "INT"}},
		PrimaryKey: []string{"k"}, Options: map[string]string{"auto-increment.fields": " uid "}}}
	if !info.HasPrimaryKey() || !reflect.DeepEqual(info.AutoIncrementColumns(), []string{"uid"}) {
		t.Errorf("HasPrimaryKey %v, AutoIncrementColumns %v", info.HasPrimaryKey(), info.AutoIncrementColumns())
	}
	if info.Columns[0].IsNullable() || !info.Columns[1].IsNullable() {
		t.Error("IsNullable")
	}
}
