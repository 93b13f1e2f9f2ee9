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
		case tc.want != "" && (errs.KindOf(err) != errs.Invalid || !strings.HasPrefix(err.Error(), tc.want)):
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
