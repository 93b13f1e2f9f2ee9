package merge_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/merge"
	"github.com/fluxgate-io/fluxgate/row"
)

// newMerger builds the merger of a table given as columns "name TYPE" (the
// first ones the key, as many as pk) and options.
func newMerger(t testing.TB, cols []catalog.Column, pk []string, opts map[string]string) *merge.Merger {
	t.Helper()
	info, err := catalog.NormalizeSpec(catalog.TableSpec{Table: "fluss.t", Columns: cols, PrimaryKey: pk, Options: opts}, catalog.Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := merge.New(info)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newWrite(t testing.TB, m *merge.Merger, target []int, overwrite bool) *merge.Write {
	t.Helper()
	w, err := m.NewWrite(target, overwrite)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func cols(specs ...string) []catalog.Column {
	out := make([]catalog.Column, 0, len(specs)/2)
	for i := 0; i < len(specs); i += 2 {
		out = append(out, catalog.Column{Name: specs[i], Type: specs[i+1]})
	}
	return out
}

func TestUndoOf(t *testing.T) {
	r := row.Row{"A", int64(5)}
	for _, tc := range []struct {
		first  merge.Change
		upsert row.Row
		del    bool
	}{
		{merge.Change{Kind: merge.Insert, Row: r}, nil, true},
		{merge.Change{Kind: merge.UpdateBefore, Row: r}, r, false},
		{merge.Change{Kind: merge.UpdateAfter, Row: r}, nil, false},
		{merge.Change{Kind: merge.Delete, Row: r}, r, false},
	} {
		up, del := merge.UndoOf(tc.first)
		if !slices.Equal(up, tc.upsert) || del != tc.del {
			t.Errorf("UndoOf(%s) = %v, %v; want %v, %v", tc.first.Kind, up, del, tc.upsert, tc.del)
		}
	}
}

func TestKinds(t *testing.T) {
	// The byte values are Fluss's, and the log stores them as they are.
	for k, want := range map[merge.Kind]string{1: "+I", 2: "-U", 3: "+U", 4: "-D"} {
		if k.String() != want {
			t.Errorf("Kind(%d) = %s, want %s", byte(k), k, want)
		}
	}
	if merge.Insert != 1 || merge.UpdateBefore != 2 || merge.UpdateAfter != 3 || merge.Delete != 4 {
		t.Error("change kinds differ from Fluss's byte values")
	}
}

// TestErrorKinds checks the PROTOCOL.md §1 kind of every refusal.
func TestErrorKinds(t *testing.T) {
	plain := newMerger(t, cols("k", "INT", "v", "STRING", "w", "STRING"), []string{"k"}, nil)
	notNull := false
	strict := newMerger(t, []catalog.Column{{Name: "k", Type: "INT"}, {Name: "v", Type: "STRING", Nullable: &notNull}, {Name: "w", Type: "STRING"}}, []string{"k"}, nil)
	first := newMerger(t, cols("k", "INT", "v", "STRING", "w", "STRING"), []string{"k"}, map[string]string{"table.merge-engine": "first_row"})
	auto := newMerger(t, cols("k", "INT", "id", "BIGINT", "v", "STRING"), []string{"k"}, map[string]string{"auto-increment.fields": "id"})
	for _, tc := range []struct {
		name      string
		m         *merge.Merger
		target    []int
		overwrite bool
		want      errs.Kind
	}{
		{"partial update without the key", plain, []int{1}, false, errs.InvalidArgument},
		{"a NOT NULL non-key column", strict, []int{0, 2}, false, errs.InvalidArgument},
		{"partial update on first_row", first, []int{0, 1}, false, errs.FailedPrecondition},
		{"writing the auto-increment column", auto, []int{0, 1, 2}, false, errs.FailedPrecondition},
		{"writing the auto-increment column under OVERWRITE", auto, []int{0, 1}, true, errs.FailedPrecondition},
		{"an unknown column", plain, []int{0, 3}, false, errs.InvalidArgument},
		{"a column twice", plain, []int{0, 1, 1}, false, errs.InvalidArgument},
	} {
		_, err := tc.m.NewWrite(tc.target, tc.overwrite)
		if !errs.Is(err, tc.want) {
			t.Errorf("%s: got %v (%s), want %s", tc.name, err, errs.KindOf(err), tc.want)
		}
	}
	for _, tc := range []struct {
		m         *merge.Merger
		target    []int
		overwrite bool
	}{
		{first, []int{0, 1}, true},     // OVERWRITE allows partial updates
		{first, []int{0, 1, 2}, false}, // every column: a whole-row write
		{auto, nil, false},
		{auto, []int{0, 2}, false}, // every column but the id: the same
		{strict, []int{0, 1, 2}, false},
	} {
		if _, err := tc.m.NewWrite(tc.target, tc.overwrite); err != nil {
			t.Errorf("NewWrite(%v, %v): %v", tc.target, tc.overwrite, err)
		}
	}

	disabled := newMerger(t, cols("k", "INT", "v", "STRING"), []string{"k"}, map[string]string{"table.delete.behavior": "disable"})
	w := newWrite(t, disabled, nil, false)
	if w.DeleteNeedsOld() {
		t.Error("a table refusing deletes should not need the stored row for them")
	}
	_, _, _, err := w.Delete(row.Row{int32(1), "a"})
	if !errs.Is(err, errs.FailedPrecondition) {
		t.Errorf("delete on disable: %v, want a precondition error", err)
	}
}

func TestWriteShape(t *testing.T) {
	m := newMerger(t, cols("k", "INT", "id", "BIGINT", "v", "STRING", "w", "STRING"), []string{"k"}, map[string]string{"auto-increment.fields": "id"})
	w := newWrite(t, m, nil, false)
	if got := w.Target(); !slices.Equal(got, []int{0, 2, 3}) || w.Partial() || !w.NeedsOld() {
		t.Errorf("whole-row write: target %v, partial %v, needs old %v", got, w.Partial(), w.NeedsOld())
	}
	w = newWrite(t, m, []int{2, 0}, false)
	if got := w.Target(); !slices.Equal(got, []int{0, 2}) || !w.Partial() {
		t.Errorf("partial write: target %v, partial %v", got, w.Partial())
	}

	wal := newMerger(t, cols("k", "INT", "v", "STRING"), []string{"k"}, map[string]string{"table.changelog.image": "wal"})
	if newWrite(t, wal, nil, false).NeedsOld() {
		t.Error("WAL, no engine, whole row: the stored row is not needed")
	}
	if !newWrite(t, wal, []int{0}, false).NeedsOld() {
		t.Error("WAL partial write: the stored row is needed")
	}
}

func TestAutoIncrementIDs(t *testing.T) {
	m := newMerger(t, cols("k", "INT", "id", "INT", "v", "STRING"), []string{"k"}, map[string]string{"auto-increment.fields": "id"})
	w := newWrite(t, m, nil, false)

	stored, _, err := w.Upsert(nil, row.Row{int32(1), nil, "a"}, func() (int64, error) { return 7, nil })
	if err != nil || stored[1] != int32(7) {
		t.Fatalf("insert: %v, %v; want id int32(7)", stored, err)
	}
	_, _, err = w.Upsert(stored, row.Row{int32(1), nil, "b"}, func() (int64, error) {
		t.Error("an update must not take an id")
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = w.Upsert(nil, row.Row{int32(2), nil, "a"}, func() (int64, error) { return math.MaxInt32 + 1, nil })
	if !errs.Is(err, errs.ResourceExhausted) {
		t.Errorf("an id beyond INT: %v, want resource exhausted", err)
	}
	boom := errors.New("boom")
	if _, _, err = w.Upsert(nil, row.Row{int32(2), nil, "a"}, func() (int64, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Errorf("the id source's error: got %v", err)
	}
	if _, _, err = w.Upsert(nil, row.Row{int32(2), nil, "a"}, nil); !errs.Is(err, errs.Internal) {
		t.Errorf("no id source: got %v", err)
	}
}

// TestOlderSchema: a row stored under an older schema, with fewer columns, is
// padded with NULLs (as Fluss reads it), also in the changelog.
func TestOlderSchema(t *testing.T) {
	m := newMerger(t, cols("k", "INT", "n", "BIGINT", "added", "STRING"), []string{"k"},
		map[string]string{"table.merge-engine": "aggregation", "fields.n.agg": "sum", "table.delete.behavior": "allow"})
	old := row.Row{int32(1), int64(2)}
	stored, changes, err := newWrite(t, m, nil, false).Upsert(old, row.Row{int32(1), int64(3), "x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (row.Row{int32(1), int64(5), "x"}); !slices.Equal(stored, want) {
		t.Errorf("stored %v, want %v", stored, want)
	}
	if len(changes) != 2 || len(changes[0].Row) != 3 {
		t.Errorf("changes %v: want -U of the padded row, +U", changes)
	}
	_, _, changes, err = newWrite(t, m, nil, false).Delete(old)
	if err != nil || len(changes) != 1 || len(changes[0].Row) != 3 {
		t.Errorf("delete: %v, %v; want -D of the padded row", changes, err)
	}
}

// TestNestedValues: last_value and the other any-type functions carry ARRAY,
// MAP and ROW values through.
func TestNestedValues(t *testing.T) {
	m := newMerger(t, cols("k", "INT", "a", "ARRAY<INT>", "mp", "MAP<STRING, INT>", "r", "ROW<x INT, y STRING>"), []string{"k"},
		map[string]string{"table.merge-engine": "aggregation", "fields.a.agg": "last_value", "fields.mp.agg": "first_value"})
	w := newWrite(t, m, nil, false)
	old := row.Row{int32(1), []any{int32(1)}, row.MapValue{{Key: "a", Value: int32(1)}}, []any{int32(1), "p"}}
	in := row.Row{int32(1), nil, row.MapValue{{Key: "b", Value: int32(2)}}, []any{int32(2), nil}}
	stored, _, err := w.Upsert(old, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := row.Row{int32(1), nil, old[2], []any{int32(2), nil}}
	types := []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.ListOf(arrow.PrimitiveTypes.Int32),
		arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32),
		arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true})}
	for i := range want {
		if !row.Equal(types[i], stored[i], want[i]) {
			t.Errorf("column %d: %v, want %v", i, stored[i], want[i])
		}
	}
}

// TestBitmapFormats pins the bytes of the portable serializations that Java
// and Python readers decode (RoaringFormatSpec).
func TestBitmapFormats(t *testing.T) {
	m := newMerger(t, cols("k", "INT", "r", "BYTES", "r64", "BYTES"), []string{"k"},
		map[string]string{"table.merge-engine": "aggregation", "fields.r.agg": "rbm32", "fields.r64.agg": "rbm64"})
	w := newWrite(t, m, nil, false)
	bm32 := func(vals ...uint32) []byte {
		b, _ := roaring.BitmapOf(vals...).ToBytes()
		return b
	}
	bm64 := func(vals ...uint64) []byte {
		b, _ := roaring64.BitmapOf(vals...).ToBytes()
		return b
	}
	stored, _, err := w.Upsert(row.Row{int32(1), bm32(1), bm64(1)}, row.Row{int32(1), bm32(2, 3), bm64(2, 3)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// cookie 12346 (no run containers), 1 container; key 0, cardinality-1 2;
	// offset 16; values 1, 2, 3 as little-endian uint16.
	const want32 = "3a300000" + "01000000" + "00000200" + "10000000" + "010002000300"
	if got := hex.EncodeToString(stored[1].([]byte)); got != want32 {
		t.Errorf("rbm32 bytes %s, want %s", got, want32)
	}
	// 64-bit: bucket count (uint64), then per bucket its high 32 bits and the
	// 32-bit bitmap of the low ones.
	const want64 = "0100000000000000" + "00000000" + want32
	if got := hex.EncodeToString(stored[2].([]byte)); got != want64 {
		t.Errorf("rbm64 bytes %s, want %s", got, want64)
	}
}

// TestUpsertAllocations guards the hot path: an aggregation update allocates
// only the boxed result.
func TestUpsertAllocations(t *testing.T) {
	m := newMerger(t, cols("k", "BIGINT", "n", "BIGINT"), []string{"k"},
		map[string]string{"table.merge-engine": "aggregation", "fields.n.agg": "sum"})
	w := newWrite(t, m, nil, false)
	old := row.Row{int64(1), int64(1000)}
	in := row.Row{int64(1), int64(1000)}
	n := testing.AllocsPerRun(100, func() {
		in[0], in[1] = old[0], old[1]
		if _, _, err := w.Upsert(old, in, nil); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Errorf("%v allocations per aggregation upsert, want at most 1", n)
	}
}

// TestBitmapRuns: like Fluss, the union is run-optimized, so dense ids (as
// auto-increment assigns them) stay small.
func TestBitmapRuns(t *testing.T) {
	m := newMerger(t, cols("k", "INT", "r", "BYTES", "r64", "BYTES"), []string{"k"},
		map[string]string{"table.merge-engine": "aggregation", "fields.r.agg": "rbm32", "fields.r64.agg": "rbm64"})
	w := newWrite(t, m, nil, false)
	acc32, in32 := roaring.New(), roaring.New()
	acc32.AddRange(1, 5001)
	in32.Add(5001)
	acc64, in64 := roaring64.New(), roaring64.New()
	acc64.AddRange(1, 5001)
	in64.Add(5001)
	a32, _ := acc32.ToBytes()
	i32, _ := in32.ToBytes()
	a64, _ := acc64.ToBytes()
	i64, _ := in64.ToBytes()
	stored, _, err := w.Upsert(row.Row{int32(1), a32, a64}, row.Row{int32(1), i32, i64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, max := range []int{20, 40} {
		b := stored[i+1].([]byte)
		if len(b) > max {
			t.Errorf("column %d: %d bytes for the ids 1..5001, want at most %d (one run)", i+1, len(b), max)
		}
	}
	var got roaring.Bitmap
	if _, err := got.ReadFrom(bytes.NewReader(stored[1].([]byte))); err != nil || got.GetCardinality() != 5001 || !got.Contains(5001) {
		t.Errorf("rbm32 union: %v, %v", got.String(), err)
	}
}
