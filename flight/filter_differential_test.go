package flight_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/predicate"
)

// diffColumns are the columns of the differential test's table: values
// clustered by batch, so that statistics rule batches out and prove that
// every row of others matches, and NULLs, some batches all NULL.
var diffColumns = []client.Column{
	{Name: "id", Type: "BIGINT", Nullable: new(false)},
	{Name: "k", Type: "INT"},
	{Name: "d", Type: "DOUBLE"},
	{Name: "s", Type: "STRING"},
	{Name: "b", Type: "BOOLEAN"},
	{Name: "day", Type: "DATE"},
	{Name: "dec", Type: "DECIMAL(10,2)"},
}

const diffBatches, diffRows = 16, 250

var diffStrings = [][]string{{"apple", "apricot", "avocado"}, {"banana", "blueberry"}, {"cherry", "apple", ""}}

var diffEpoch = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func diffBatch(ts *testServer, schema *arrow.Schema, j int) arrow.RecordBatch {
	b := array.NewRecordBuilder(ts.mem, schema)
	defer b.Release()
	for i := range diffRows {
		b.Field(0).(*array.Int64Builder).Append(int64(j*diffRows + i))
		if j%8 == 3 || (j%4 == 1 && i%7 == 0) {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int32Builder).Append(int32(j*10 + i%10))
		}
		b.Field(2).(*array.Float64Builder).Append(float64(j) + float64(i%5)*0.5)
		if j%5 == 2 && i%3 == 0 {
			b.Field(3).AppendNull()
		} else {
			dom := diffStrings[j%len(diffStrings)]
			b.Field(3).(*array.StringBuilder).Append(dom[i%len(dom)])
		}
		if j%2 == 0 {
			b.Field(4).(*array.BooleanBuilder).Append(true)
		} else {
			b.Field(4).(*array.BooleanBuilder).Append(i%2 == 0)
		}
		b.Field(5).(*array.Date32Builder).Append(arrow.Date32FromTime(diffEpoch.AddDate(0, 0, j)))
		if i%11 == 0 {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(j*100 + i%3)))
		}
	}
	return b.NewRecordBatch()
}

// diffLiteral draws a literal for column c near the values the table holds.
func diffLiteral(r *rand.Rand, c int) any {
	j := r.IntN(diffBatches+2) - 1
	switch diffColumns[c].Name {
	case "id":
		return j*diffRows + r.IntN(diffRows)
	case "k":
		return j*10 + r.IntN(12) - 1
	case "d":
		return float64(j) + float64(r.IntN(6))*0.5
	case "s":
		all := slices.Concat(diffStrings...)
		return append(all, "a", "b", "zzz")[r.IntN(len(all)+3)]
	case "b":
		return r.IntN(2) == 0
	case "day":
		return diffEpoch.AddDate(0, 0, j).Format(time.DateOnly)
	default: // dec
		return fmt.Sprintf("%d.%02d", j, r.IntN(4))
	}
}

// diffPredicate draws a predicate of at most depth levels.
func diffPredicate(r *rand.Rand, depth int) any {
	if depth > 0 && r.IntN(3) == 0 {
		switch r.IntN(3) {
		case 0:
			return map[string]any{"not": diffPredicate(r, depth-1)}
		default:
			op := []string{"and", "or"}[r.IntN(2)]
			kids := make([]any, 1+r.IntN(3))
			for i := range kids {
				kids[i] = diffPredicate(r, depth-1)
			}
			return map[string]any{op: kids}
		}
	}
	c := r.IntN(len(diffColumns))
	col := diffColumns[c].Name
	switch op := []string{"eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "is_null", "is_not_null", "starts_with"}[r.IntN(11)]; op {
	case "in", "not_in":
		vals := make([]any, 1+r.IntN(3))
		for i := range vals {
			vals[i] = diffLiteral(r, c)
		}
		return map[string]any{op: []any{col, vals}}
	case "is_null", "is_not_null":
		return map[string]any{op: col}
	case "starts_with":
		return map[string]any{op: []any{"s", []string{"a", "ap", "b", "", "ch", "x"}[r.IntN(6)]}}
	default:
		return map[string]any{op: []any{col, diffLiteral(r, c)}}
	}
}

// Filtered scans through the server equal filtering the unfiltered scan in
// the test (with package predicate's kernels, which its own differential test
// checks against a reference evaluator): random predicates over every
// operator, nested, with NULLs, on an uncompressed and a ZSTD table, with
// batches asked for uncompressed and as stored. What is tested is the
// server's part: skipping batches by their statistics, sending batches whose
// statistics prove that every row matches without filtering them (and, for
// ZSTD, as stored), filtering the rest.
func TestFilteredScansEqualFilteringInTheTest(t *testing.T) {
	ts := start(t, engine.Options{})
	// 150 predicates × 4 reads: under -race on a busy 2-core machine this
	// takes far longer than ctxT's 30 s, which only guards against a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	spec := client.TableSpec{Columns: diffColumns, Options: map[string]string{"bucket.num": "1"}}
	schema, err := spec.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.RecordBatch
	for j := range diffBatches {
		recs = append(recs, diffBatch(ts, schema, j))
	}
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for _, codec := range []string{"none", "zstd"} {
		spec.Table = "diff_" + codec
		spec.Options["table.log.arrow.compression.type"] = codec
		if _, err := ts.cl.CreateTable(ctx, spec, false); err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			rec.Retain()                                                // writePK releases it
			writePK(t, ts, client.WriteRequest{Table: spec.Table}, rec) // one batch, one frame
		}
	}
	r := rand.New(rand.NewPCG(20261130, 5))
	skipped, exact := 0, 0
	for n := range 150 {
		js, err := json.Marshal(diffPredicate(r, 3))
		if err != nil {
			t.Fatal(err)
		}
		want := diffFilterInTest(t, ctx, recs, schema, js)
		for _, codec := range []string{"none", "zstd"} {
			for _, wire := range []string{"", "zstd"} {
				got := diffScanIDs(t, ts, client.ScanRequest{Table: "diff_" + codec, Filter: json.RawMessage(js), Compression: wire})
				if !slices.Equal(got, want) {
					t.Fatalf("predicate %d %s on the %s table, %q batches: the server returns %d rows, the test filters %d\nserver %v\ntest   %v",
						n, js, codec, wire, len(got), len(want), got, want)
				}
			}
		}
		if len(want) == 0 {
			skipped++
		} else if len(want) == diffBatches*diffRows {
			exact++
		}
	}
	t.Logf("150 predicates: %d match no row, %d every row", skipped, exact)
}

// diffScanIDs returns the ids a scan through the server returns.
func diffScanIDs(t *testing.T, ts *testServer, req client.ScanRequest) []int64 {
	t.Helper()
	sc, err := ts.cl.Scan(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	var out []int64
	for sc.Next() {
		out = append(out, column[*array.Int64](sc.RecordBatch(), "id").Int64Values()...)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// diffFilterInTest returns the ids of the rows of recs that match js.
func diffFilterInTest(t *testing.T, ctx context.Context, recs []arrow.RecordBatch, schema *arrow.Schema, js []byte) []int64 {
	t.Helper()
	e, err := predicate.Parse(js)
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	bound, err := predicate.Bind(e, schema)
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	var out []int64
	for _, rec := range recs {
		mask, err := bound.Filter(ctx, memtest.Allocator(t), rec.Column, int(rec.NumRows()))
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(0).(*array.Int64)
		for i := range mask.Len() {
			if mask.Value(i) {
				out = append(out, ids.Value(i))
			}
		}
		mask.Release()
	}
	return out
}
