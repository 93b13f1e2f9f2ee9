package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemo runs the demo end to end against its embedded server and checks
// each story's title and key results.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo against an embedded server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	if err := Main(ctx, nil, &out, &errOut); err != nil {
		t.Fatalf("demo: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		// Story 1: current rows, changelog, first_row.
		"== 1. Updates without dedup state ==",
		"fluss.orders$changelog",
		"update_before", "update_after", "delete ",
		"needs no\ndedup or ROW_NUMBER state",
		"fluss.first_visit$changelog",
		// Story 2: both sides of every id.
		"== 2. Partial-update join ==",
		"ann, Paris", "bob, Berlin", "cat, Oslo",
		// Story 3: dense ids.
		"== 3. Global dictionary ==",
		"alice bob alice  1 2 1",
		"5 distinct users, ids dense 1..5",
		// Story 4: the undo and the exactly-once totals.
		"== 4. Storage-side aggregation, exactly once ==",
		"2 keys restored",
		"exactly-once totals: 2024-06-01 pv=8 users=5, 2024-06-02 pv=7 users=4: every event counted exactly once",
		// Story 5: the lake holds the tiered rows, the union read all of them.
		"== 5. Lake-stream union read ==",
		"lake snapshot committed with offsets {bucket 0 @ 3}",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	if !regexp.MustCompile(`clicks\$lake[^\n]*\n[^\n]*\n[^\n]*\n\s+ann\s+home\s+0\s+0\n\s+bob\s+pricing\s+0\s+1\n\s+ann\s+docs\s+0\s+2\n\n`).MatchString(got) {
		t.Errorf("fluss.clicks$lake is not the three tiered rows")
	}
	if !regexp.MustCompile(`ann\s+docs\n\s+cat\s+blog\n\s+bob\s+home\n`).MatchString(got) {
		t.Errorf("the union read of fluss.clicks does not go on from the lake to the log")
	}
	// The current rows of orders: 1 shipped, 2 deleted, 3 paid.
	if !regexp.MustCompile(`\n\s+1\s+shipped\s+25\n\s+3\s+paid\s+12\.5\n`).MatchString(got) {
		t.Errorf("fluss.orders' current rows are not 1 shipped and 3 paid")
	}
	// first_row: ann keeps home, bob pricing.
	if !regexp.MustCompile(`\n\s+ann\s+home\n\s+bob\s+pricing\n\s+cat\s+blog\n`).MatchString(got) {
		t.Errorf("fluss.first_visit does not keep the first rows")
	}
	if t.Failed() {
		t.Logf("output:\n%s", got)
	}
}

// TestDemoKeepQuiet checks --keep (the data stays, a non-empty directory is
// refused) and --quiet (tables and results, no narration).
func TestDemoKeepQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo against an embedded server")
	}
	dir := filepath.Join(t.TempDir(), "kept")
	var out, errOut bytes.Buffer
	if err := Main(context.Background(), []string{"--keep", dir, "--quiet"}, &out, &errOut); err != nil {
		t.Fatalf("demo --keep --quiet: %v\nstderr:\n%s", err, errOut.String())
	}
	got := out.String()
	if strings.Contains(got, "fluxgate demo: an embedded server") || strings.Contains(got, "ROW_NUMBER") {
		t.Errorf("--quiet printed narration:\n%s", got)
	}
	for _, want := range []string{"fluss.orders$changelog", "ids dense 1..5", "every event counted exactly once"} {
		if !strings.Contains(got, want) {
			t.Errorf("--quiet output lacks %q:\n%s", want, got)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 {
		t.Errorf("--keep %s: the data directory is gone or empty (%v)", dir, err)
	}
	out.Reset()
	if err := Main(context.Background(), []string{"--keep", dir}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("demo --keep on a used directory: %v; want a refusal", err)
	}
}
