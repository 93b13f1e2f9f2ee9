package predicate

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/framestats"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/row"
)

// testBatch returns a few rows of testSchema, with nulls.
func testBatch(mem memory.Allocator) arrow.RecordBatch {
	bld := array.NewRecordBuilder(mem, testSchema)
	defer bld.Release()
	for _, r := range []row.Row{
		{int64(1), int64(7), decimal128.FromI64(10050), arrow.Timestamp(1764504000123), "apple", []byte("a"), []any{"x"}, true, arrow.Date32(20000), 0.5, []byte("ab")},
		{int64(2), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{int64(3), int64(1), decimal128.FromI64(-5), arrow.Timestamp(0), "banana", []byte{}, []any{}, false, arrow.Date32(-1), -1.0, []byte("zz")},
		{int64(4), int64(2), decimal128.FromI64(99999), arrow.Timestamp(-1), "", []byte("zz"), []any{nil}, true, arrow.Date32(0), 1e300, nil},
	} {
		row.AppendRow(bld, r)
	}
	return bld.NewRecordBatch()
}

var parseSeeds = []string{
	`{"and": [{"gt": ["amount", "100.00"]}, {"in": ["user_id", [1, 2, 3]]}]}`,
	`{"or": [{"is_null": "tags"}, {"not": {"is_not_null": "name"}}, {"starts_with": ["name", "ap"]}]}`,
	`{"not": {"and": [{"ge": ["ts", "2026-11-30T12:00:00.123"]}, {"lt": ["ts", 1764504000123]}]}}`,
	`{"not_in": ["day", ["2026-11-30", "1970-01-01"]]}`,
	`{"and": [{"eq": ["data", "zz"]}, {"ne": ["flag", true]}, {"le": ["ratio", 0.5]}]}`,
	`{"lt": ["flag", true]}`,
	`{"eq": ["order_id", 1], "ne": ["order_id", 2]}`,
	`{"in": ["order_id", []]}`,
	`{"eq": ["nope", null]}`,
	`{"and": [}`,
	nested(MaxDepth + 1),
	`[[[[[[[[[[`,
	``,
}

// FuzzParse checks that Parse and Bind never panic, that their errors are
// errs.InvalidArgument, and that a predicate that binds filters the test batch
// without error and without contradicting MayMatch or MatchesAll.
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	rec := testBatch(memtest.Allocator(f))
	defer rec.Release()
	stats, err := framestats.Decode(framestats.Compute(rec), arrowTypes(testSchema))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Parse(data)
		if err == nil {
			var b *Bound
			if b, err = Bind(e, testSchema); err == nil {
				_ = b.String()
				mask, err := b.Filter(context.Background(), memtest.Allocator(t), rec.Column, int(rec.NumRows()))
				if err != nil {
					t.Fatalf("Filter(%s): %v", data, err)
				}
				defer mask.Release()
				if countTrue(mask) > 0 && !b.MayMatch(rec.NumRows(), stats) {
					t.Fatalf("MayMatch(%s) = false, but a row matches", data)
				}
				if b.MatchesAll(rec.NumRows(), stats) && countTrue(mask) != int(rec.NumRows()) {
					t.Fatalf("MatchesAll(%s) = true, but a row does not match", data)
				}
				return
			}
		}
		if k := errs.KindOf(err); k != errs.InvalidArgument {
			t.Fatalf("%q: error of kind %v: %v", data, k, err)
		}
	})
}

// FuzzDecodeStats checks that framestats.Decode never panics on a corrupt block,
// and that what it accepts is usable by MayMatch.
func FuzzDecodeStats(f *testing.F) {
	mem := memtest.Allocator(f)
	for _, rec := range []arrow.RecordBatch{skipBatch(mem, 0), skipBatch(mem, -50)} {
		f.Add(framestats.Compute(rec))
		rec.Release()
	}
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Add([]byte{1, 7, 3, 0, 1})
	f.Add([]byte{1, 7, 3, 0, 8, 0x80, 0, 0, 0, 0, 0, 0, 0, 8, 0x80, 0, 0, 0, 0, 0, 0, 1})
	types := arrowTypes(skipSchema)
	var bounds []*Bound
	for _, s := range []string{
		`{"gt": ["id", 5]}`, `{"not": {"eq": ["gone", 1]}}`, `{"starts_with": ["name", "b"]}`,
		`{"or": [{"lt": ["f", 0.5]}, {"in": ["long", ["x"]]}]}`, `{"not_in": ["flag", [false]]}`, `{"is_null": "bin"}`,
	} {
		e, err := Parse([]byte(s))
		if err != nil {
			f.Fatal(err)
		}
		b, err := Bind(e, skipSchema)
		if err != nil {
			f.Fatal(err)
		}
		bounds = append(bounds, b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		stats, err := framestats.Decode(data, types)
		if err != nil {
			return
		}
		// A batch written before columns were added has statistics for fewer
		// columns than the table has now, never for more.
		if len(stats) > len(types) {
			t.Fatalf("%d statistics for %d columns", len(stats), len(types))
		}
		for i, s := range stats {
			if s.NullCount < 0 || (s.Min != nil && !fits(types[i], s.Min)) || (s.Max != nil && !fits(types[i], s.Max)) {
				t.Fatalf("column %d: %+v", i, s)
			}
		}
		for _, b := range bounds {
			b.MayMatch(100, stats)
			b.MayMatch(1, stats)
		}
	})
}
