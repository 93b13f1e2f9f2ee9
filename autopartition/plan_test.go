package autopartition

import (
	"slices"
	"testing"
	"time"

	"github.com/fluxgate-io/fluxgate/errs"
)

func strategy(t *testing.T, keys []string, opts map[string]string) *Strategy {
	t.Helper()
	for k, v := range opts {
		stored, ok, err := ParseOption(k, v)
		if !ok || err != nil {
			t.Fatalf("option %s=%s: %t %v", k, v, ok, err)
		}
		opts[k] = stored
	}
	if err := Validate(opts, keys, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	s, err := FromOptions(opts, keys, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func at(t *testing.T, zone, local string) time.Time {
	t.Helper()
	z, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := time.ParseInLocation("2006-01-02 15:04", local, z)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts map[string]string
		now  time.Time
		want map[int]string // offset → value
	}{
		{name: "day", opts: map[string]string{OptTimeUnit: "day"}, now: at(t, "UTC", "2026-12-31 23:59"),
			want: map[int]string{-1: "20261230", 0: "20261231", 1: "20270101", -365: "20251231"}},
		{name: "day leap", opts: map[string]string{OptTimeUnit: "DAY"}, now: at(t, "UTC", "2028-02-28 12:00"),
			want: map[int]string{1: "20280229", 2: "20280301"}},
		{name: "hour", opts: map[string]string{OptTimeUnit: "hour"}, now: at(t, "UTC", "2026-12-31 23:10"),
			want: map[int]string{-24: "2026123023", 0: "2026123123", 1: "2027010100"}},
		{name: "month from a 31st", opts: map[string]string{OptTimeUnit: "month"}, now: at(t, "UTC", "2026-01-31 08:00"),
			want: map[int]string{-1: "202512", 0: "202601", 1: "202602", 12: "202701"}},
		{name: "quarter", opts: map[string]string{OptTimeUnit: "quarter"}, now: at(t, "UTC", "2026-12-02 01:00"),
			want: map[int]string{-4: "20254", -3: "20261", 0: "20264", 1: "20271", 5: "20281"}},
		{name: "quarter custom", opts: map[string]string{OptTimeUnit: "quarter", OptTimeFormat: "yyyy'Q'Q"}, now: at(t, "UTC", "2026-03-31 23:00"),
			want: map[int]string{0: "2026Q1", 1: "2026Q2"}},
		{name: "year", opts: map[string]string{OptTimeUnit: "year"}, now: at(t, "UTC", "2028-02-29 00:00"),
			want: map[int]string{-7: "2021", 0: "2028", 1: "2029"}},
		{name: "custom day format", opts: map[string]string{OptTimeFormat: "yyyy-MM-dd"}, now: at(t, "UTC", "2026-12-02 01:00"),
			want: map[int]string{0: "2026-12-02", 1: "2026-12-03"}},
		// The zone decides the day: 23:30 in New York is the next day in UTC.
		{name: "day in a zone", opts: map[string]string{OptTimeZone: "America/New_York"}, now: at(t, "America/New_York", "2026-03-08 23:30"),
			want: map[int]string{0: "20260308", 1: "20260309", -1: "20260307"}},
		// Spring forward: 02:00 does not exist in New York on 2026-03-08.
		{name: "hour over a skipped hour", opts: map[string]string{OptTimeUnit: "hour", OptTimeZone: "America/New_York"}, now: at(t, "America/New_York", "2026-03-08 01:30"),
			want: map[int]string{-1: "2026030800", 0: "2026030801", 1: "2026030803", 2: "2026030804"}},
		// Fall back: 01:00 happens twice in New York on 2026-11-01.
		{name: "hour over a repeated hour", opts: map[string]string{OptTimeUnit: "hour", OptTimeZone: "America/New_York"}, now: at(t, "America/New_York", "2026-11-01 00:30"),
			want: map[int]string{0: "2026110100", 1: "2026110101", 2: "2026110101", 3: "2026110102"}},
		// A day has 23 or 25 hours across a DST change, but is still one day.
		{name: "day over a DST change", opts: map[string]string{OptTimeZone: "Europe/Berlin"}, now: at(t, "Europe/Berlin", "2026-03-29 00:30"),
			want: map[int]string{0: "20260329", 1: "20260330", -1: "20260328"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := strategy(t, []string{"dt"}, tc.opts)
			for off, want := range tc.want {
				if got := s.Value(tc.now, off); got != want {
					t.Errorf("Value(%s, %d) = %q, want %q", tc.now, off, got, want)
				}
			}
		})
	}
}

func TestPlan(t *testing.T) {
	now := at(t, "UTC", "2026-12-02 10:00")
	for _, tc := range []struct {
		name       string
		keys       []string
		opts       map[string]string
		now        time.Time
		partitions []string
		create     []string
		drop       []string
	}{
		{name: "empty day table", keys: []string{"dt"}, opts: map[string]string{}, now: now,
			create: []string{"20261202", "20261203"}},
		{name: "existing skipped", keys: []string{"dt"}, opts: map[string]string{}, now: now,
			partitions: []string{"20261202"}, create: []string{"20261203"}},
		{name: "retention 2 keeps two past days", keys: []string{"dt"}, opts: map[string]string{OptNumRetention: "2"}, now: now,
			partitions: []string{"20261128", "20261129", "20261130", "20261201", "20261202", "20261203"},
			drop:       []string{"20261128", "20261129"}},
		{name: "retention 0 keeps only the current", keys: []string{"dt"}, opts: map[string]string{OptNumRetention: "0", OptNumPrecreate: "1"}, now: now,
			partitions: []string{"20261201", "20261202"}, drop: []string{"20261201"}},
		{name: "negative retention keeps all", keys: []string{"dt"}, opts: map[string]string{OptNumRetention: "-1", OptNumPrecreate: "0"}, now: now,
			partitions: []string{"19991231"}},
		{name: "unmatched values left alone", keys: []string{"dt"}, opts: map[string]string{OptNumRetention: "1", OptNumPrecreate: "3"}, now: now,
			partitions: []string{"2026-11-01", "legacy", "20261100", "20261101", "__historical__"},
			create:     []string{"20261202", "20261203", "20261204"}, drop: []string{"20261101"}},
		{name: "hour", keys: []string{"dt"}, opts: map[string]string{OptTimeUnit: "hour", OptNumRetention: "1", OptNumPrecreate: "3"}, now: now,
			partitions: []string{"2026120208", "2026120209", "2026120210"},
			create:     []string{"2026120211", "2026120212"}, drop: []string{"2026120208"}},
		{name: "month", keys: []string{"dt"}, opts: map[string]string{OptTimeUnit: "month", OptNumRetention: "1"}, now: now,
			partitions: []string{"202610", "202611"}, create: []string{"202612", "202701"}, drop: []string{"202610"}},
		{name: "multi-key drops every partition of an old time", keys: []string{"region", "dt"},
			opts: map[string]string{OptEnabled: "true", OptKey: "dt", OptNumRetention: "1"}, now: now,
			partitions: []string{"eu$20261130", "us$20261130", "eu$20261201", "eu$20261202", "us$x"},
			drop:       []string{"eu$20261130", "us$20261130"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := strategy(t, tc.keys, tc.opts).Plan(tc.now, tc.partitions)
			if !slices.Equal(p.Create, tc.create) || !slices.Equal(p.Drop, tc.drop) {
				t.Errorf("plan create %v drop %v; want create %v drop %v", p.Create, p.Drop, tc.create, tc.drop)
			}
		})
	}
}

func TestCheckCreate(t *testing.T) {
	now := at(t, "UTC", "2026-12-02 10:00")
	for _, tc := range []struct {
		name string
		keys []string
		opts map[string]string
		spec map[string]string
		kind errs.Kind // 0 with err "" for success
		err  string
	}{
		{name: "off without format: anything", keys: []string{"dt"}, opts: map[string]string{}, spec: map[string]string{"dt": "anything"}},
		{name: "off with format: format checked", keys: []string{"dt"}, opts: map[string]string{OptTimeFormat: "yyyy-MM-dd"},
			spec: map[string]string{"dt": "20261202"}, kind: errs.InvalidArgument,
			err: "Partition value '20261202' does not match the expected format 'yyyy-MM-dd' for auto-partition time unit 'DAY'."},
		{name: "off with format: old is fine", keys: []string{"dt"}, opts: map[string]string{OptTimeFormat: "yyyy-MM-dd"},
			spec: map[string]string{"dt": "1999-01-01"}},
		{name: "on: bad format", keys: []string{"dt"}, opts: map[string]string{OptEnabled: "true", OptTimeUnit: "month"},
			spec: map[string]string{"dt": "eu"}, kind: errs.InvalidArgument,
			err: "Partition value 'eu' does not match the expected format 'yyyyMM' for auto-partition time unit 'MONTH'."},
		{name: "on: earliest retained", keys: []string{"dt"}, opts: map[string]string{OptEnabled: "true", OptNumRetention: "2"},
			spec: map[string]string{"dt": "20261130"}},
		{name: "on: out of date", keys: []string{"dt"}, opts: map[string]string{OptEnabled: "true", OptNumRetention: "2"},
			spec: map[string]string{"dt": "20261129"}, kind: errs.FailedPrecondition,
			err: "Partition value '20261129' is out-of-date. The earliest retained partition is '20261130'."},
		{name: "on: future", keys: []string{"dt"}, opts: map[string]string{OptEnabled: "true"},
			spec: map[string]string{"dt": "20991231"}},
		{name: "multi-key: the time key is checked", keys: []string{"region", "dt"},
			opts: map[string]string{OptEnabled: "true", OptKey: "dt", OptNumRetention: "1"},
			spec: map[string]string{"region": "20000101", "dt": "20261130"}, kind: errs.FailedPrecondition,
			err: "Partition value '20261130' is out-of-date. The earliest retained partition is '20261201'."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := strategy(t, tc.keys, tc.opts).CheckCreate(now, tc.spec)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != tc.err || errs.KindOf(err) != tc.kind {
				t.Fatalf("error %v (%v), want %q (%v)", err, errs.KindOf(err), tc.err, tc.kind)
			}
		})
	}
}
