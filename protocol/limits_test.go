package protocol

import (
	"runtime"
	"strings"
	"testing"

	"github.com/fluxgate-io/fluxgate/errs"
)

// nestedFilter is a scan command whose filter nests {"not": ...} depth deep.
func nestedFilter(depth int) []byte {
	return []byte(`{"scan":{"table":"t","filter":` + strings.Repeat(`{"not":`, depth) + `{"is_null":"a"}` + strings.Repeat(`}`, depth) + `}}`)
}

// allocatedBy returns the bytes f allocates on the heap.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A deeply nested document is refused before anything is decoded, in memory
// linear in its size: the duplicate-key check once kept each object's path,
// so 800 KB of {"not": ...} cost gigabytes before any permission check.
func TestDeepJSONIsRefusedInBoundedMemory(t *testing.T) {
	for _, depth := range []int{MaxDepth + 1, 20_000, 100_000} {
		b := nestedFilter(depth)
		var err error
		used := allocatedBy(func() { _, err = DecodeCommand(b) })
		if !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), "nested deeper than") {
			t.Fatalf("depth %d: %v, want INVALID_ARGUMENT about nesting", depth, err)
		}
		// The refusal comes at MaxDepth, so what it costs does not grow with
		// the document.
		if used > 1<<20 {
			t.Errorf("depth %d (%d bytes): refusing it allocated %d bytes, want at most 1 MiB", depth, len(b), used)
		}
	}
}

// MaxDepth counts every object and array: a command of exactly MaxDepth
// levels decodes, one more does not.
func TestMaxDepthIsExact(t *testing.T) {
	if _, err := DecodeCommand(nestedFilter(MaxDepth - 3)); err != nil { // root, scan, the nots, is_null
		t.Fatalf("%d levels: %v", MaxDepth, err)
	}
	if _, err := DecodeCommand(nestedFilter(MaxDepth - 2)); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("%d levels: %v, want INVALID_ARGUMENT", MaxDepth+1, err)
	}
}

// The deepest filter the predicate language allows (PROTOCOL.md §4.4) fits
// in a command.
func TestDeepestPredicateFitsInACommand(t *testing.T) {
	const predicates = 64
	filter := strings.Repeat(`{"and":[`, predicates-1) + `{"in":["a",[{"base64":"AA=="}]]}` + strings.Repeat(`]}`, predicates-1)
	if _, err := DecodeCommand([]byte(`{"scan":{"table":"t","filter":` + filter + `}}`)); err != nil {
		t.Fatal(err)
	}
}

// Duplicate keys are found in one pass, in memory linear in the document:
// wide and deep documents alike.
func TestDuplicateKeyCheckIsLinear(t *testing.T) {
	deep := []byte(strings.Repeat(`{"k":`, MaxDepth-1) + `1` + strings.Repeat(`}`, MaxDepth-1))
	wide := []byte(`[` + strings.Repeat(`{"a":1,"b":[2]},`, 10_000) + `{}]`)
	for name, b := range map[string][]byte{"deep": deep, "wide": wide} {
		var err error
		used := allocatedBy(func() { err = checkShape(b) })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if limit := uint64(64*len(b)) + 64<<10; used > limit {
			t.Errorf("%s (%d bytes): the check allocated %d bytes, want at most %d", name, len(b), used, limit)
		}
	}
}

// A document over MaxDocumentBytes is refused before it is parsed.
func TestLargeDocumentIsRefused(t *testing.T) {
	b := []byte(`{"scan":{"table":"` + strings.Repeat("t", MaxDocumentBytes) + `"}}`)
	var err error
	used := allocatedBy(func() { _, err = DecodeCommand(b) })
	if !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), "bytes; the limit is") {
		t.Fatalf("%v, want INVALID_ARGUMENT naming the limit", err)
	}
	if used > 64<<10 {
		t.Errorf("refusing it allocated %d bytes", used)
	}
}

// Every string a request decodes into is bounded, wherever it stands; raw
// filters and lookup key values are bounded by their own rules.
func TestLongStringsAreRefusedWhereverTheyStand(t *testing.T) {
	long := strings.Repeat("w", MaxStringBytes+1)
	for _, c := range []struct {
		doc, path string // path "": accepted
	}{
		{`{"write":{"table":"t","writer_id":"` + long + `"}}`, "$.write.writer_id"},
		{`{"scan":{"table":"t","columns":["a","` + long + `"]}}`, "$.scan.columns[1]"},
		{`{"scan":{"table":"t","startup":{"partition_offsets":{"` + long + `":{"0":1}}}}}`, "$.scan.startup.partition_offsets{key}"},
		{`{"lookup":{"table":"t","keys":[{"k":1},{"` + long + `":1}]}}`, "$.lookup.keys[1]{key}"},
		{`{"lookup":{"table":"t","keys":[{"k":"` + long + `"}]}}`, ""},
		{`{"scan":{"table":"t","filter":{"eq":["a","` + long + `"]}}}`, ""},
	} {
		_, err := DecodeCommand([]byte(c.doc))
		switch {
		case c.path == "" && err != nil:
			t.Errorf("%.80s: %v", c.doc, err)
		case c.path != "" && (!errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), c.path+`: the string "www`)):
			t.Errorf("%.80s: %v, want INVALID_ARGUMENT naming %s", c.doc, err, c.path)
		case err != nil && len(err.Error()) > 300:
			t.Errorf("%.80s: a message of %d bytes", c.doc, len(err.Error()))
		}
	}
	var spec CreateTableRequest
	body := `{"table":"t","columns":[{"name":"r","type":"INT"}],"options":{"k":"` + long + `"}}`
	if err := DecodeJSON([]byte(body), "create-table", &spec); err == nil || !strings.Contains(err.Error(), "$.options.k: the string") {
		t.Errorf("create-table: %v, want the option value refused", err)
	}
}
