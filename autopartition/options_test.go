package autopartition

import (
	"maps"
	"testing"
	"time"
)

func TestParseOption(t *testing.T) {
	for _, tc := range []struct {
		key, value, stored string
		err                bool
	}{
		{key: OptEnabled, value: "TRUE", stored: "true"},
		{key: OptEnabled, value: "yes", err: true},
		{key: OptTimeUnit, value: "Quarter", stored: "quarter"},
		{key: OptTimeUnit, value: "week", err: true},
		{key: OptTimeZone, value: "Europe/Berlin", stored: "Europe/Berlin"},
		{key: OptTimeZone, value: "Mars/Olympus", err: true},
		{key: OptTimeZone, value: "Local", err: true},
		{key: OptNumPrecreate, value: " 3 ", stored: "3"},
		{key: OptNumRetention, value: "-1", stored: "-1"},
		{key: OptNumRetention, value: "2147483648", err: true},
		{key: OptKey, value: " dt ", stored: "dt"},
		{key: OptTimeFormat, value: "yyyy-MM-dd", stored: "yyyy-MM-dd"},
	} {
		got, ok, err := ParseOption(tc.key, tc.value)
		if !ok || (err != nil) != tc.err || got != tc.stored {
			t.Errorf("ParseOption(%s, %q) = %q, %t, %v; want %q, error %t", tc.key, tc.value, got, ok, err, tc.stored, tc.err)
		}
	}
	if _, ok, _ := ParseOption(OptPrefix+"unknown", "1"); ok {
		t.Errorf("ParseOption took an unknown key")
	}
}

func TestValidate(t *testing.T) {
	dates := map[string]bool{"d": true}
	isDate := func(c string) bool { return dates[c] }
	for _, tc := range []struct {
		name string
		opts map[string]string
		keys []string
		err  string
	}{
		{name: "unpartitioned off", opts: map[string]string{OptEnabled: "false"}},
		{name: "unpartitioned on", opts: map[string]string{OptEnabled: "true"},
			err: "Currently, auto partition is only supported for partitioned table, please set table property 'table.auto-partition.enabled' to false."},
		{name: "one key defaults", opts: map[string]string{OptEnabled: "true"}, keys: []string{"dt"}},
		{name: "multi key needs key", opts: map[string]string{OptEnabled: "true"}, keys: []string{"region", "dt"},
			err: "Currently, auto partitioned table must set one auto partition key when it has multiple partition keys. Please set table property 'table.auto-partition.key'."},
		{name: "key not a partition key", opts: map[string]string{OptEnabled: "true", OptKey: "x"}, keys: []string{"region", "dt"},
			err: "The specified key for auto partitioned table is not a partition key. Your key 'x' is not in key list [region, dt]"},
		{name: "key of a one-key table", opts: map[string]string{OptKey: "x"}, keys: []string{"dt"},
			err: "The specified key for auto partitioned table is not a partition key. Your key 'x' is not in key list [dt]"},
		{name: "multi key precreate 0", opts: map[string]string{OptEnabled: "true", OptKey: "dt"}, keys: []string{"region", "dt"}},
		{name: "multi key precreate set", opts: map[string]string{OptEnabled: "true", OptKey: "dt", OptNumPrecreate: "2"}, keys: []string{"region", "dt"},
			err: "For a partitioned table with multiple partition keys, auto pre-create is unsupported and this value must be set to 0, but is 2"},
		{name: "multi key off is not checked", opts: map[string]string{OptNumPrecreate: "2"}, keys: []string{"region", "dt"}},
		{name: "format checked when off", opts: map[string]string{OptTimeFormat: "yyyyMM"}, keys: []string{"dt"},
			err: "Invalid table property 'table.auto-partition.time-format': Time format 'yyyyMM' must contain fields [year, month, day] in this order for time unit 'DAY', but found [year, month]."},
		{name: "format of its unit", opts: map[string]string{OptTimeFormat: "yyyy_MM", OptTimeUnit: "month", OptEnabled: "true"}, keys: []string{"dt"}},
		{name: "date key unit", opts: map[string]string{OptEnabled: "true", OptTimeUnit: "month"}, keys: []string{"d"},
			err: "Table property 'table.auto-partition.time-unit' must be 'DAY' when auto partition key 'd' has DATE type."},
		{name: "date key format", opts: map[string]string{OptEnabled: "true"}, keys: []string{"d"},
			err: "Table property 'table.auto-partition.time-format' must be 'yyyy-MM-dd' when auto partition key 'd' has DATE type."},
		{name: "date key ok", opts: map[string]string{OptEnabled: "true", OptTimeFormat: "yyyy-MM-dd"}, keys: []string{"d"}},
		{name: "date key of a multi-key table", opts: map[string]string{OptEnabled: "true", OptKey: "d", OptTimeFormat: "yyyyMMdd"}, keys: []string{"region", "d"},
			err: "Table property 'table.auto-partition.time-format' must be 'yyyy-MM-dd' when auto partition key 'd' has DATE type."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := maps.Clone(tc.opts)
			err := Validate(opts, tc.keys, isDate)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The defaults of a partitioned table are filled in.
			want := map[string]string{}
			if len(tc.keys) > 0 {
				want = map[string]string{OptEnabled: "false", OptTimeUnit: "day", OptNumPrecreate: "2", OptNumRetention: "7"}
				if len(tc.keys) > 1 {
					want[OptNumPrecreate] = "0"
				}
			}
			maps.Copy(want, tc.opts)
			if !maps.Equal(opts, want) {
				t.Errorf("options %v, want %v", opts, want)
			}
		})
	}
}

func TestFromOptions(t *testing.T) {
	s, err := FromOptions(map[string]string{OptEnabled: "true"}, []string{"dt"}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Enabled || s.Key != "dt" || s.Unit != Day || s.Format.String() != "yyyyMMdd" || s.FormatSet ||
		s.Zone != time.UTC || s.NumPrecreate != 2 || s.NumRetention != 7 {
		t.Errorf("defaults: %v", s)
	}
	s, err = FromOptions(map[string]string{
		OptEnabled: "true", OptKey: "dt", OptTimeUnit: "hour", OptTimeFormat: "yyyy-MM-dd-HH",
		OptTimeZone: "Asia/Shanghai", OptNumPrecreate: "0", OptNumRetention: "24",
	}, []string{"region", "dt"}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if s.KeyIndex != 1 || s.Unit != Hour || !s.FormatSet || s.Zone.String() != "Asia/Shanghai" || s.NumPrecreate != 0 || s.NumRetention != 24 {
		t.Errorf("set: %v", s)
	}
}
