package tiering

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/lake"
)

// fakeLog is a one-bucket changelog of (k BIGINT, v STRING) rows.
type fakeLog struct {
	mem     memory.Allocator
	schema  *arrow.Schema
	pk      []int
	batches []Batch
	first   int64 // the earliest retained offset
}

type change struct {
	kind byte // 0 insert (log table), 1 +I, 2 -U, 3 +U, 4 -D
	k    int64
	v    string
}

func (f *fakeLog) append(changes ...change) {
	b := array.NewRecordBuilder(f.mem, f.schema)
	defer b.Release()
	var kinds []byte
	for _, c := range changes {
		b.Field(0).(*array.Int64Builder).Append(c.k)
		b.Field(1).(*array.StringBuilder).Append(c.v)
		kinds = append(kinds, c.kind)
	}
	batch := Batch{Rec: b.NewRecordBatch(), Offset: f.end(), CommitMs: 1000}
	if f.pk != nil {
		batch.ChangeTypes = kinds
	}
	f.batches = append(f.batches, batch)
}

func (f *fakeLog) end() int64 {
	if len(f.batches) == 0 {
		return 0
	}
	last := f.batches[len(f.batches)-1]
	return last.Offset + last.Rec.NumRows()
}

func (f *fakeLog) Buckets() int                { return 1 }
func (f *fakeLog) Retained(int) (int64, int64) { return f.first, f.end() }
func (f *fakeLog) PrimaryKey() []int           { return f.pk }
func (f *fakeLog) Read(_ context.Context, _ int, from, to int64, fn func(Batch) error) error {
	for _, b := range f.batches {
		if b.Offset+b.Rec.NumRows() > from && b.Offset < to {
			if err := fn(b); err != nil {
				return err
			}
		}
	}
	return nil
}

// fold applies the log's changes in order: the table's rows at its end, by key.
func (f *fakeLog) fold() map[int64]string {
	state := map[int64]string{}
	for _, b := range f.batches {
		for i := range int(b.Rec.NumRows()) {
			k, v := b.Rec.Column(0).(*array.Int64).Value(i), b.Rec.Column(1).(*array.String).Value(i)
			switch b.ChangeTypes[i] {
			case 1, 3:
				state[k] = v
			case 4:
				delete(state, k)
			}
		}
	}
	return state
}

// Snapshot folds the whole log: the state at its end.
func (f *fakeLog) Snapshot(_ context.Context, _ int, fn func(Batch) error) (int64, error) {
	state := f.fold()
	rb := array.NewRecordBuilder(f.mem, f.schema)
	defer rb.Release()
	for _, k := range slices.Sorted(maps.Keys(state)) {
		rb.Field(0).(*array.Int64Builder).Append(k)
		rb.Field(1).(*array.StringBuilder).Append(state[k])
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	return f.end(), fn(Batch{Rec: rec, Offset: -1, CommitMs: -1})
}

// newLake returns an empty lake table and its log, on a checked allocator
// that must hold nothing once the test has ended and the log is released.
func newLake(t *testing.T, pk bool) (*lake.Table, *fakeLog) {
	t.Helper()
	return newLakeWith(t, pk, lake.Options{})
}

// newLakeWith is newLake on a lake opened with opts, in a new warehouse.
func newLakeWith(t *testing.T, pk bool, opts lake.Options) (*lake.Table, *fakeLog) {
	t.Helper()
	no := false
	spec := catalog.TableSpec{Table: "fluss.t", Columns: []catalog.Column{{Name: "k", Type: "BIGINT", Nullable: &no}, {Name: "v", Type: "STRING"}}}
	if pk {
		spec.PrimaryKey = []string{"k"}
	}
	info, err := catalog.NormalizeSpec(spec, catalog.Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	info.TableID = 1
	opts.Warehouse = t.TempDir()
	l, err := lake.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	lt, err := l.Ensure(context.Background(), info)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	f := &fakeLog{mem: mem, schema: info.ArrowSchema()}
	if pk {
		f.pk = info.PrimaryKeyIndexes()
	}
	t.Cleanup(func() {
		for _, b := range f.batches {
			b.Rec.Release()
		}
		mem.AssertSize(t, 0)
	})
	return lt, f
}

// lakeRows reads the lake snapshot as sorted "k=v@offset" lines.
func lakeRows(t *testing.T, lt *lake.Table, f *fakeLog, snap *lake.Snapshot) []string {
	t.Helper()
	return partitionRows(t, lt, f.mem, snap, nil)
}

// partitionRows is lakeRows of one partition (nil: a table without them).
func partitionRows(t *testing.T, lt *lake.Table, mem memory.Allocator, snap *lake.Snapshot, part lake.Partition) []string {
	t.Helper()
	recs, err := lt.Scan(context.Background(), mem, snap.ID, part, 0, []string{"k", "v", lake.ColOffset}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			out = append(out, fmt.Sprintf("%d=%s@%d", rec.Column(0).(*array.Int64).Value(i), rec.Column(1).(*array.String).Value(i), rec.Column(2).(*array.Int64).Value(i)))
		}
		rec.Release()
	}
	slices.Sort(out)
	return out
}

func round(t *testing.T, lt *lake.Table, f *fakeLog) Result {
	t.Helper()
	res, err := Round(context.Background(), lt, f, f.mem)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func want(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("lake rows\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// As Fluss tiers a primary-key table to Iceberg (fluss-lake/fluss-lake-iceberg,
// tiering/IcebergLakeWriter): a round folds each key's changes to its last row;
// an update or delete of a row in an earlier round retires it with a
// position delete, which does not touch the row written in the same commit.
func TestPrimaryKeyRoundsFoldChanges(t *testing.T) {
	lt, f := newLake(t, true)
	f.append(change{1, 1, "a"}, change{1, 2, "b"}, change{1, 3, "c"}) // 0-2
	f.append(change{2, 1, "a"}, change{3, 1, "a2"})                   // 3-4: 1 updated in the same round
	res := round(t, lt, f)
	want(t, lakeRows(t, lt, f, res.Snapshot), "1=a2@4", "2=b@1", "3=c@2")

	f.append(change{2, 2, "b"}, change{3, 2, "b2"}, change{4, 3, "c"})                       // 5-7: 2 updated, 3 deleted
	f.append(change{1, 3, "c3"})                                                             // 8: 3 inserted again
	f.append(change{2, 2, "b2"}, change{3, 2, "b3"}, change{2, 2, "b3"}, change{3, 2, "b4"}) // 9-12: 2 twice more
	res = round(t, lt, f)
	want(t, lakeRows(t, lt, f, res.Snapshot), "1=a2@4", "2=b4@12", "3=c3@8")
	if res.Snapshot.Offsets[0] != 13 || res.Stats.DeletedKeys != 2 {
		t.Fatalf("round 2: offsets %v, %d keys retired; want offset 13 and keys 2 and 3 retired", res.Snapshot.Offsets, res.Stats.DeletedKeys)
	}

	f.append(change{4, 1, "a2"}, change{4, 2, "b4"}) // 13-14: both deleted
	res = round(t, lt, f)
	want(t, lakeRows(t, lt, f, res.Snapshot), "3=c3@8")

	// Nothing new: no commit.
	if again := round(t, lt, f); again.Committed || again.Snapshot.ID != res.Snapshot.ID {
		t.Fatalf("a round with nothing new committed snapshot %d", again.Snapshot.ID)
	}
}

// A primary-key table whose log was cut before its first round is tiered
// from its state, rows at offset -1; its later changes follow.
func TestFirstRoundFromStateWhenTheLogIsCut(t *testing.T) {
	lt, f := newLake(t, true)
	f.append(change{1, 1, "a"}, change{1, 2, "b"})
	f.append(change{2, 1, "a"}, change{3, 1, "a2"})
	f.first = 2
	res := round(t, lt, f)
	want(t, lakeRows(t, lt, f, res.Snapshot), "1=a2@-1", "2=b@-1")
	if res.Snapshot.Offsets[0] != 4 {
		t.Fatalf("the snapshot round recorded offset %d, want 4 (the state's)", res.Snapshot.Offsets[0])
	}
	f.append(change{2, 2, "b"}, change{3, 2, "b2"})
	res = round(t, lt, f)
	want(t, lakeRows(t, lt, f, res.Snapshot), "1=a2@-1", "2=b2@5")
}

// A log table appends every row with its offset; rounds neither repeat nor
// skip a range.
func TestLogRoundsAppend(t *testing.T) {
	lt, f := newLake(t, false)
	f.append(change{0, 1, "a"}, change{0, 2, "b"})
	round(t, lt, f)
	f.append(change{0, 3, "c"})
	f.append(change{0, 1, "a"})
	res := round(t, lt, f)
	want(t, lakeRows(t, lt, f, res.Snapshot), "1=a@0", "1=a@3", "2=b@1", "3=c@2")
	if res.Rows != 2 || res.Snapshot.Offsets[0] != 4 {
		t.Fatalf("round 2 read %d rows to offset %d, want 2 rows to 4", res.Rows, res.Snapshot.Offsets[0])
	}
}
