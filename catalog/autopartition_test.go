package catalog

import (
	"strings"
	"testing"

	"github.com/fluxgate-io/fluxgate/errs"
)

func TestAutoPartitionOptionsOfAnUnpartitionedTable(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want string // "" for accepted
	}{
		{opts: map[string]string{"table.auto-partition.enabled": "false"}},
		{opts: map[string]string{"table.auto-partition.enabled": "TRUE"},
			want: "table db.t: Currently, auto partition is only supported for partitioned table, please set table property 'table.auto-partition.enabled' to false."},
		{opts: map[string]string{"table.auto-partition.enabled": "maybe"},
			want: `table db.t: option "table.auto-partition.enabled" = "maybe": expected true or false`},
		{opts: map[string]string{"table.auto-partition.time-units": "day"},
			want: `table db.t: unknown option "table.auto-partition.time-units"`},
	} {
		_, err := NormalizeSpec(testSpec(nil, tc.opts), Defaults{})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.opts, err)
		case tc.want != "" && (errs.KindOf(err) != errs.InvalidArgument || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%v: got %v, want invalid argument %q", tc.opts, err, tc.want)
		}
	}
	base, err := NormalizeSpec(testSpec(nil, nil), Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ValidateAlter(base, map[string]string{"table.auto-partition.enabled": "true"}, nil, nil); err == nil ||
		!strings.Contains(err.Error(), "auto partition is only supported for partitioned table") {
		t.Errorf("alter enabling auto partitions of an unpartitioned table: %v", err)
	}
	if _, err := ValidateAlter(base, map[string]string{"table.auto-partition.time-unit": "hour"}, nil, nil); err == nil ||
		!strings.Contains(err.Error(), `option "table.auto-partition.time-unit" cannot be altered`) {
		t.Errorf("alter of the time unit: %v", err)
	}
}

// testPartitioned is testSpec's log table partitioned by keys.
func testPartitioned(keys []string, opts map[string]string) TableSpec {
	s := testSpec(nil, opts)
	s.PartitionKeys = keys
	return s
}

func TestAutoPartitionOptionsOfAPartitionedTable(t *testing.T) {
	info, err := NormalizeSpec(testPartitioned([]string{"s", "k2"}, map[string]string{
		"table.auto-partition.enabled": "true", "table.auto-partition.key": "k2", "table.auto-partition.time-unit": "Hour",
	}), Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	// Fluss forces num-precreate to 0 with more than one partition key; the
	// defaults are filled in.
	if got := info.Options["table.auto-partition.num-precreate"]; got != "0" || info.Options["table.auto-partition.time-unit"] != "hour" ||
		info.Options["table.auto-partition.num-retention"] != "7" {
		t.Errorf("options %v", info.Options)
	}
	for _, tc := range []struct {
		keys []string
		opts map[string]string
		want string
	}{
		{[]string{"s", "k2"}, map[string]string{"table.auto-partition.enabled": "true"},
			"Currently, auto partitioned table must set one auto partition key when it has multiple partition keys."},
		{[]string{"dt"}, map[string]string{"table.auto-partition.enabled": "true"},
			"Table property 'table.auto-partition.time-format' must be 'yyyy-MM-dd' when auto partition key 'dt' has DATE type."},
		{[]string{"s"}, map[string]string{"table.auto-partition.time-format": "yyyy/MM/dd"},
			"Invalid table property 'table.auto-partition.time-format': Time format 'yyyy/MM/dd' generates invalid partition value"},
	} {
		_, err := NormalizeSpec(testPartitioned(tc.keys, tc.opts), Defaults{})
		if errs.KindOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: got %v, want invalid argument %q", tc.keys, tc.opts, err, tc.want)
		}
	}
	if _, err := NormalizeSpec(testPartitioned([]string{"dt"}, map[string]string{
		"table.auto-partition.enabled": "true", "table.auto-partition.time-format": "yyyy-MM-dd",
	}), Defaults{}); err != nil {
		t.Errorf("DATE key with yyyy-MM-dd: %v", err)
	}

	off, err := NormalizeSpec(testPartitioned([]string{"s", "k2"}, map[string]string{"table.auto-partition.key": "k2"}), Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	on, err := ValidateAlter(off, map[string]string{"table.auto-partition.enabled": "true", "table.auto-partition.num-retention": "3"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if on.Options["table.auto-partition.num-precreate"] != "0" || on.Options["table.auto-partition.num-retention"] != "3" {
		t.Errorf("options after enabling: %v", on.Options)
	}
	if _, err := ValidateAlter(on, map[string]string{"table.auto-partition.num-precreate": "1"}, nil, nil); err == nil ||
		!strings.Contains(err.Error(), "auto pre-create is unsupported and this value must be set to 0, but is 1") {
		t.Errorf("precreate on a multi-key table: %v", err)
	}
	reset, err := ValidateAlter(on, nil, []string{"table.auto-partition.num-retention"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := reset.Options["table.auto-partition.num-retention"]; got != "7" {
		t.Errorf("num-retention after reset: %q, want the default 7", got)
	}
}
