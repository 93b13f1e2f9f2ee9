package viewplan

import (
	"fmt"
	"testing"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/catalog/catalogtest"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// TestMayMatchPartitionEveryKeyType judges filters on partitions of each
// partition key type: a partition whose key value the filter rules out is
// pruned, one it may match is kept, and one whose value is not a spelling
// ValueString writes is kept (planned in full).
func TestMayMatchPartitionEveryKeyType(t *testing.T) {
	cat := catalogtest.Open(t)
	tables := map[string]*catalog.TableInfo{}
	table := func(typ string) *catalog.TableInfo {
		if info := tables[typ]; info != nil {
			return info
		}
		info := catalogtest.Table(t, cat, catalog.TableSpec{
			Table:         fmt.Sprintf("t%d", len(tables)),
			Columns:       []catalog.Column{{Name: "id", Type: "BIGINT"}, {Name: "k", Type: typ}},
			PartitionKeys: []string{"k"},
		})
		tables[typ] = info
		return info
	}
	tests := []struct {
		typ, value, filter string
		want               bool
	}{
		{"TIMESTAMP(6)", "2026-12-01-10-00-00_123456", `{"eq": ["k", "2026-12-01T10:00:00.123456"]}`, true},
		{"TIMESTAMP(6)", "2026-12-01-10-00-00_123456", `{"eq": ["k", "2026-12-01T10:00:00.123457"]}`, false},
		{"TIMESTAMP(6)", "2026-12-01-10-00-00_123456", `{"ge": ["k", "2026-12-01T10:00:00.123457"]}`, false},
		{"TIMESTAMP(6)", "2026-12-01-10-00-00_123456", `{"lt": ["k", "2026-12-01T10:00:01"]}`, true},
		{"TIMESTAMP(6)", "2026-12-01-10-00-00_", `{"in": ["k", ["2026-12-01T10:00:00.000001", "2026-12-01 10:00:00"]]}`, true},
		{"TIMESTAMP(3)", "2026-12-01-10-00-00_5", `{"eq": ["k", "2026-12-01 10:00:00.5"]}`, true},
		{"TIMESTAMP(3)", "2026-12-01-10-00-00_5", `{"gt": ["k", "2026-12-01T10:00:00.5"]}`, false},
		{"TIMESTAMP(0)", "1999-12-31-23-59-59_", `{"eq": ["k", "1999-12-31T23:59:59"]}`, true},
		{"TIMESTAMP(0)", "1999-12-31-23-59-59_", `{"ne": ["k", "1999-12-31T23:59:59"]}`, false},
		{"TIMESTAMP(9)", "1969-12-31-23-59-59_999999999", `{"eq": ["k", "1969-12-31T23:59:59.999999999"]}`, true},
		{"TIMESTAMP(9)", "1969-12-31-23-59-59_999999999", `{"ge": ["k", "1970-01-01T00:00:00"]}`, false},
		{"TIMESTAMP_LTZ(6)", "2026-12-01-10-00-00_", `{"eq": ["k", "2026-12-01T12:00:00+02:00"]}`, true},
		{"TIMESTAMP_LTZ(6)", "2026-12-01-10-00-00_", `{"eq": ["k", "2026-12-01T10:00:00+02:00"]}`, false},
		{"TIMESTAMP_LTZ(9)", "2026-12-01-10-00-00_000000001", `{"lt": ["k", "2026-12-01T10:00:00.000000001Z"]}`, false},
		{"TIMESTAMP(6)", "2026-12-01-10-00-00_000", `{"eq": ["k", "2026-12-03T10:00:00"]}`, true}, // not ValueString's: kept

		// A TIME to the millisecond is one value; a finer one's partition
		// holds its millisecond's values.
		{"TIME(3)", "01-02-03_004", `{"eq": ["k", "01:02:03.004"]}`, true},
		{"TIME(3)", "01-02-03_004", `{"eq": ["k", "01:02:03.005"]}`, false},
		{"TIME(3)", "01-02-03_004", `{"not": {"eq": ["k", "01:02:03.004"]}}`, false},
		{"TIME(0)", "01-02-03_000", `{"gt": ["k", "01:02:03"]}`, false},
		{"TIME(6)", "01-02-03_004", `{"eq": ["k", "01:02:03.004999"]}`, true},
		{"TIME(6)", "01-02-03_004", `{"eq": ["k", "01:02:03.005"]}`, false},
		{"TIME(6)", "01-02-03_004", `{"lt": ["k", "01:02:03.004"]}`, false},
		{"TIME(6)", "01-02-03_004", `{"not": {"eq": ["k", "01:02:03.004"]}}`, true},
		{"TIME(9)", "00-00-00_000", `{"ge": ["k", "00:00:00.001"]}`, false},
		{"TIME(9)", "00-00-00_000", `{"eq": ["k", "00:00:00.000999999"]}`, true},
		{"TIME(3)", "1-02-03_004", `{"eq": ["k", "10:00:00"]}`, true}, // not ValueString's: kept

		{"FLOAT", "1_5", `{"eq": ["k", 1.5]}`, true},
		{"FLOAT", "1_5", `{"eq": ["k", 1.25]}`, false},
		{"FLOAT", "1_5", `{"gt": ["k", 1.5]}`, false},
		{"FLOAT", "0_1", `{"eq": ["k", 0.1]}`, true},
		{"FLOAT", "1_50", `{"eq": ["k", 2]}`, true}, // not ValueString's: kept
		{"DOUBLE", "0_1", `{"eq": ["k", 0.1]}`, true},
		{"DOUBLE", "0_1", `{"lt": ["k", 0.1]}`, false},
		{"DOUBLE", "1_0E7", `{"eq": ["k", 10000000]}`, true},
		{"DOUBLE", "-2_5E-4", `{"ge": ["k", 0]}`, false},
		// -0.0 equals 0.0, as the filter compares floats.
		{"DOUBLE", "-0_0", `{"eq": ["k", 0]}`, true},
		{"DOUBLE", "-0_0", `{"lt": ["k", 0]}`, false},
		// NaN equals NaN and is above +Inf, as the filter orders floats.
		{"DOUBLE", "NaN", `{"eq": ["k", "NaN"]}`, true},
		{"DOUBLE", "NaN", `{"ne": ["k", "NaN"]}`, false},
		{"DOUBLE", "NaN", `{"gt": ["k", "Infinity"]}`, true},
		{"DOUBLE", "NaN", `{"lt": ["k", "Infinity"]}`, false},
		{"DOUBLE", "NaN", `{"not": {"gt": ["k", 1]}}`, false},
		{"DOUBLE", "Inf", `{"eq": ["k", "Infinity"]}`, true},
		{"DOUBLE", "-Inf", `{"ge": ["k", -1e308]}`, false},

		{"CHAR(3)", "abc", `{"eq": ["k", "abc"]}`, true},
		{"CHAR(3)", "abc", `{"starts_with": ["k", "b"]}`, false},
		{"BINARY(2)", "0aff", `{"eq": ["k", {"base64": "Cv8="}]}`, true},
		{"BINARY(2)", "0aff", `{"eq": ["k", "ab"]}`, false},
		{"BYTES", "6869", `{"eq": ["k", "hi"]}`, true},
		{"BYTES", "6869", `{"gt": ["k", "hi"]}`, false},
		{"VARBINARY(8)", "6869", `{"in": ["k", ["ha", "ho"]]}`, false},
		{"BYTES", "6A69", `{"eq": ["k", "hi"]}`, true}, // not ValueString's: kept

		{"DATE", "2026-12-01", `{"lt": ["k", "2026-12-01"]}`, false},
		{"DATE", "2026-12-01", `{"le": ["k", "2026-12-01"]}`, true},
		{"INT", "7", `{"eq": ["k", 8]}`, false},
		{"INT", "007", `{"eq": ["k", 8]}`, true}, // not ValueString's: kept
		{"BOOLEAN", "true", `{"eq": ["k", false]}`, false},
		{"STRING", "eu", `{"eq": ["k", "us"]}`, false},
	}
	for _, tt := range tests {
		info := table(tt.typ)
		p, err := Resolve(info, protocol.ViewLog, nil, []byte(tt.filter))
		if err != nil {
			t.Fatalf("%s %s: %v", tt.typ, tt.filter, err)
		}
		if got := p.MayMatchPartition(info, []string{tt.value}); got != tt.want {
			t.Errorf("%s partition %q, filter %s: may match %v, want %v", tt.typ, tt.value, tt.filter, got, tt.want)
		}
	}
}
