package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestBench runs every workload end to end at tiny sizes and checks that the
// JSON parses and that every workload measured positive rates.
func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every workload against an embedded server")
	}
	var out, errOut bytes.Buffer
	err := Main(context.Background(), []string{"--quick", "--rows", "20000", "--batch-rows", "2048", "--keys", "5000", "--json"},
		&out, &errOut)
	if err != nil {
		t.Fatalf("bench: %v\nstderr:\n%s", err, errOut.String())
	}
	var results []benchResult
	if err := json.Unmarshal(out.Bytes(), &results); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out.String())
	}
	if len(results) != len(benchWorkloads) {
		t.Fatalf("%d results for %d workloads:\n%s", len(results), len(benchWorkloads), out.String())
	}
	stored := map[string]int64{}
	for i, r := range results {
		if r.Workload != benchWorkloads[i].name || r.Baseline == "" {
			t.Errorf("result %d is %q (baseline %q), want workload %q", i, r.Workload, r.Baseline, benchWorkloads[i].name)
		}
		if r.RowsPerS <= 0 || r.MBPerS <= 0 || r.BaselineRowsPerS <= 0 || r.Ratio <= 0 {
			t.Errorf("%s: rates %+v", r.Workload, r)
		}
		if strings.HasPrefix(r.Workload, "append/") {
			stored[r.Workload] = r.StoredBytes
		}
	}
	// The events are realistic: ZSTD stores them in well under half the space.
	if none, zstd := stored["append/none"], stored["append/zstd"]; none <= 0 || zstd <= 0 || zstd*2 > none {
		t.Errorf("stored bytes: none %d, zstd %d", none, zstd)
	}
}

// TestBenchTable checks the text report of a subset of the workloads.
func TestBenchTable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded server")
	}
	var out, errOut bytes.Buffer
	profile := filepath.Join(t.TempDir(), "cpu.prof")
	err := Main(context.Background(), []string{"--rows", "5000", "--reps", "1", "--run", "^(append|tiering)", "--cpuprofile", profile},
		&out, &errOut)
	if err != nil {
		t.Fatalf("bench: %v\nstderr:\n%s", err, errOut.String())
	}
	text := out.String()
	for _, want := range []string{"median of 1 interleaved runs", "WORKLOAD", "BASELINE ROWS/S", "append/none", "append/zstd",
		"no-op Flight DoPut", "tiering", "raw iceberg-go appends", "zstd/none = "} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "scan/") {
		t.Errorf("--run selected scans:\n%s", text)
	}
	// A profile is gzipped protobuf.
	if b, err := os.ReadFile(profile); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("--cpuprofile wrote %d bytes, err %v", len(b), err)
	}
}

func TestBenchFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--run", "nothing-matches"},
		{"--rows", "10"},
		{"--reps", "0"},
		{"--keys", "10"},
		{"--run", "("},
		{"extra"},
	} {
		var out, errOut bytes.Buffer
		if err := Main(context.Background(), args, &out, &errOut); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
}

func TestBenchHelpers(t *testing.T) {
	s := func(rows int64, ms int) benchSample {
		return benchSample{rows: rows, d: time.Duration(ms) * time.Millisecond}
	}
	if got := benchMedian([]benchSample{s(10, 1), s(10, 10), s(10, 2)}, benchSample.rowsPerS); got != 5000 {
		t.Errorf("median of 3 = %v", got)
	}
	if got := benchMedian([]benchSample{s(10, 1), s(10, 2)}, benchSample.rowsPerS); got != 7500 {
		t.Errorf("median of 2 = %v", got)
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 2000000: "2,000,000", 16384: "16,384"} {
		if got := benchInt(n); got != want {
			t.Errorf("benchInt(%d) = %q", n, got)
		}
	}
	if got := benchLookupsPerRun(5000); got != 1000 {
		t.Errorf("benchLookupsPerRun(5000) = %d", got)
	}
	if got := benchLookupsPerRun(10_000_000); got != 200_000 {
		t.Errorf("benchLookupsPerRun(1e7) = %d", got)
	}
	ev := benchEventData(10_000, 1000)
	if len(ev.recs) != 10 || ev.rows != 10_000 || ev.matching < 50 || ev.matching > 150 {
		t.Errorf("events: %d batches, %d rows, filter matches %d", len(ev.recs), ev.rows, ev.matching)
	}
	prev := int64(0)
	for _, rec := range ev.recs {
		if rec.NumCols() != int64(len(benchEventColumns)) {
			t.Fatalf("%d columns", rec.NumCols())
		}
		for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
			if v < prev {
				t.Fatalf("ts not ascending: %d after %d", v, prev)
			}
			prev = v
		}
	}
}
