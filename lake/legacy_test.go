package lake

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// commitEqualityDeletes retires ids of bucket 0 as lakes written before
// position deletes did: with an equality-delete file.
func commitEqualityDeletes(t *testing.T, lt *Table, ids []int64) {
	t.Helper()
	ctx := context.Background()
	tbl := lt.current()
	ib, bb := array.NewInt64Builder(memtest.Allocator(t)), array.NewInt32Builder(memtest.Allocator(t))
	defer ib.Release()
	defer bb.Release()
	for _, id := range ids {
		ib.Append(id)
		bb.Append(0)
	}
	idArr, bArr := ib.NewArray(), bb.NewArray()
	defer idArr.Release()
	defer bArr.Release()
	schema := arrow.NewSchema([]arrow.Field{lt.m.lake.Field(0), {Name: ColBucket, Type: arrow.PrimitiveTypes.Int32}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{idArr, bArr}, int64(len(ids)))
	defer rec.Release()
	tx := tbl.NewTransaction()
	files, err := tx.WriteEqualityDeletes(ctx, lt.m.keyIDs, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) })
	if err != nil {
		t.Fatal(err)
	}
	props := iceberg.Properties{PropOffsets: tbl.CurrentSnapshot().Summary.Properties[PropOffsets], PropTableID: "7", PropCommitUser: CommitUser}
	if err := tx.NewRowDelta(props).AddDeletes(files...).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	committed, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lt.setCurrent(committed)
}

func deleteContents(t *testing.T, lt *Table) []iceberg.ManifestEntryContent {
	t.Helper()
	tbl := lt.current()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var out []iceberg.ManifestEntryContent
	for _, m := range ms {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			if c := e.DataFile().ContentType(); c != iceberg.EntryContentData {
				out = append(out, c)
			}
		}
	}
	return out
}

// A lake that has equality deletes (written before position deletes) still
// reads right, and its next commit of deletes first compacts them away:
// afterwards it has position deletes only, and the same rows.
func TestEqualityDeletesAreConvertedBeforeTheNextDeletes(t *testing.T) {
	mem := checkedAllocator(t)
	info := usersInfo(t)
	_, lt := openLake(t, t.TempDir(), info)
	commitRows(t, mem, lt, info, 0, 0, []int64{1, 2, 3, 4}, []string{"a", "b", "c", "d"}, nil)
	commitEqualityDeletes(t, lt, []int64{2})
	snap, _ := lt.Current()
	if got := scanIDs(t, mem, lt, snap.ID, 0); !slices.Equal(got, []int64{1, 3, 4}) {
		t.Fatalf("with an equality delete the lake reads ids %v, want [1 3 4]", got)
	}
	if got := deleteContents(t, lt); !slices.Equal(got, []iceberg.ManifestEntryContent{iceberg.EntryContentEqDeletes}) {
		t.Fatalf("the lake's delete files are %v, want one equality delete", got)
	}

	snap = commitRows(t, mem, lt, info, 0, 4, []int64{3}, []string{"c2"}, []int64{3, 4})
	if got := scanIDs(t, mem, lt, snap.ID, 0); !slices.Equal(got, []int64{1, 3}) {
		t.Fatalf("after the next round the lake reads ids %v, want [1 3]", got)
	}
	for _, c := range deleteContents(t, lt) {
		if c != iceberg.EntryContentPosDeletes {
			t.Fatalf("after the next round the lake still has %s files", c)
		}
	}
}
