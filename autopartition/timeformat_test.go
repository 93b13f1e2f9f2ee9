package autopartition

import "testing"

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		unit    TimeUnit
		value   string // the value for 2024-11-11 11h, when valid
		err     string
	}{
		{pattern: "yyyy", unit: Year, value: "2024"},
		{pattern: "yyyyQ", unit: Quarter, value: "20244"},
		{pattern: "yyyy'Q'q", unit: Quarter, value: "2024Q4"},
		{pattern: "yyyyMM", unit: Month, value: "202411"},
		{pattern: "uuuu-LL", unit: Month, value: "2024-11"},
		{pattern: "yyyyMMdd", unit: Day, value: "20241111"},
		{pattern: "yyyy-MM-dd", unit: Day, value: "2024-11-11"},
		{pattern: "yyyy_MM_dd'T'HH", unit: Hour, value: "2024_11_11T11"},
		{pattern: "'p''x'yyyy", unit: Year, err: "Time format ''p''x'yyyy' generates invalid partition value 'p'x2024': 'p'x2024' contains one or more characters other than ASCII alphanumerics, '_' and '-'."},
		{pattern: "yyMMdd", unit: Day, err: "Time field 'year' in format 'yyMMdd' must have fixed width 4, but found 2."},
		{pattern: "yyyyMd", unit: Day, err: "Time field 'month' in format 'yyyyMd' must have fixed width 2, but found 1."},
		{pattern: "ddMMyyyy", unit: Day, err: "Time format 'ddMMyyyy' must contain fields [year, month, day] in this order for time unit 'DAY', but found [day, month, year]."},
		{pattern: "yyyyMMdd", unit: Hour, err: "Time format 'yyyyMMdd' must contain fields [year, month, day, hour] in this order for time unit 'HOUR', but found [year, month, day]."},
		{pattern: "yyyyMMdd", unit: Month, err: "Time format 'yyyyMMdd' must contain fields [year, month] in this order for time unit 'MONTH', but found [year, month, day]."},
		{pattern: "yyyyMMddHHmm", unit: Hour, err: "Time format 'yyyyMMddHHmm' contains unsupported time field 'm'."},
		{pattern: "yyyy[MM]", unit: Month, err: "Time format 'yyyy[MM]' must not contain optional sections ('[' or ']')."},
		{pattern: "'yyyy", unit: Year, err: "Invalid date-time format pattern ''yyyy'."},
		{pattern: "yyyy#MM", unit: Month, err: "Invalid date-time format pattern 'yyyy#MM'."},
		{pattern: "yyyybMM", unit: Month, err: "Invalid date-time format pattern 'yyyybMM'."},
		{pattern: "yyyy]MM", unit: Month, err: "Invalid date-time format pattern 'yyyy]MM'."},
		{pattern: "yyyyddd", unit: Day, err: "Invalid date-time format pattern 'yyyyddd'."},
		{pattern: "yyyy'{'MM", unit: Month, err: "Time format 'yyyy'{'MM' generates invalid partition value '2024{11': '2024{11' contains one or more characters other than ASCII alphanumerics, '_' and '-'."},
		{pattern: "yyyy.MM.dd", unit: Day, err: "Time format 'yyyy.MM.dd' generates invalid partition value '2024.11.11': '2024.11.11' contains one or more characters other than ASCII alphanumerics, '_' and '-'."},
		{pattern: "'__'yyyy", unit: Year, err: "Time format ''__'yyyy' generates invalid partition value '__2024': '__' is not allowed as prefix, since it is reserved for internal databases/internal tables/internal partitions in Fluss server."},
	} {
		f, err := ParseFormat(tc.pattern, tc.unit)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseFormat(%q, %s): error %v, want %q", tc.pattern, tc.unit, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseFormat(%q, %s): %v", tc.pattern, tc.unit, err)
			continue
		}
		if got := f.format(civil{2024, 11, 11, 11}); got != tc.value {
			t.Errorf("format %q: %q, want %q", tc.pattern, got, tc.value)
		}
		if !f.Matches(tc.value) {
			t.Errorf("format %q does not match its own value %q", tc.pattern, tc.value)
		}
	}
}

func TestFormatMatches(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		unit    TimeUnit
		value   string
		want    bool
	}{
		{"yyyyMMdd", Day, "20261202", true},
		{"yyyyMMdd", Day, "20260231", true}, // Java's smart parser: day 31 in any month
		{"yyyyMMdd", Day, "20260232", false},
		{"yyyyMMdd", Day, "20261302", false},
		{"yyyyMMdd", Day, "20260002", false},
		{"yyyyMMdd", Day, "2026120", false},
		{"yyyyMMdd", Day, "202612021", false},
		{"yyyyMMdd", Day, "2026-12-02", false},
		{"yyyyMMdd", Day, "00001202", false}, // year of era starts at 1
		{"yyyyMMdd", Day, "eu", false},
		{"yyyy-MM-dd", Day, "2026-12-02", true},
		{"yyyy-MM-dd", Day, "2026_12_02", false},
		{"yyyyMMddHH", Hour, "2026120223", true},
		{"yyyyMMddHH", Hour, "2026120224", false},
		{"yyyyQ", Quarter, "20264", true},
		{"yyyyQ", Quarter, "20265", false},
		{"yyyyQ", Quarter, "20260", false},
		{"yyyy'Q'Q", Quarter, "2026Q1", true},
		{"yyyy'Q'Q", Quarter, "2026q1", false}, // literals are case-sensitive
		{"yyyy", Year, "2026", true},
		{"yyyy", Year, "+2026", false},
	} {
		f, err := ParseFormat(tc.pattern, tc.unit)
		if err != nil {
			t.Fatalf("ParseFormat(%q): %v", tc.pattern, err)
		}
		if got := f.Matches(tc.value); got != tc.want {
			t.Errorf("%q matches %q: %t, want %t", tc.pattern, tc.value, got, tc.want)
		}
	}
}
