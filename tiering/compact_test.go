package tiering

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/lake"
)

// pkRounds runs n small rounds of a primary-key table: each inserts 10 new
// keys, updates one earlier key in ten and now and then deletes one.
func pkRounds(t *testing.T, lt *lake.Table, f *fakeLog, n int) {
	t.Helper()
	base := f.end()
	for r := range n {
		for i := range 10 {
			f.append(change{1, base + int64(r*10+i), "a"})
		}
		for k := base + int64(r%10); k < base+int64(r*10); k += 10 {
			f.append(change{2, k, ""}, change{3, k, fmt.Sprintf("r%d", r)})
		}
		if r%7 == 6 {
			f.append(change{4, base + int64(r*10-3), ""})
		}
		round(t, lt, f)
	}
}

func compact(t *testing.T, lt *lake.Table, opts lake.CompactOptions) lake.CompactStats {
	t.Helper()
	st, err := lt.Compact(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if st.MaintenanceErr != nil {
		t.Fatal(st.MaintenanceErr)
	}
	return st
}

// checkLake asserts that the lake's scan and a reader of position deletes
// both read the table's current rows, and returns the live file counts.
func checkLake(t *testing.T, lt *lake.Table, f *fakeLog, phase string) (dataFiles, deleteFiles int) {
	t.Helper()
	want := currentRows(f)
	got, dataFiles, deleteFiles := positionReader(t, lt)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: a position-delete reader reads %d rows, want the table's %d", phase, len(got), len(want))
	}
	snap, err := lt.Current()
	if err != nil {
		t.Fatal(err)
	}
	if got := withoutOffsets(lakeRows(t, lt, f, snap)); !slices.Equal(got, want) {
		t.Fatalf("%s: the lake's scan reads %d rows, want the table's %d", phase, len(got), len(want))
	}
	return dataFiles, deleteFiles
}

// 100 small rounds then a compaction leave one data file and no delete
// file, with the same rows, offsets and snapshot offsets; rounds after it
// retire rows in the compacted file by position.
func TestCompactionPacksRoundsIntoOneFile(t *testing.T) {
	lt, f := newLake(t, true)
	pkRounds(t, lt, f, 100)
	before, _ := lt.Current()
	rowsBefore := lakeRows(t, lt, f, before)
	if files, deletes := checkLake(t, lt, f, "before compaction"); files < 100 || deletes < 50 {
		t.Fatalf("100 rounds left %d data and %d delete files; the test needs many", files, deletes)
	}
	st := compact(t, lt, lake.CompactOptions{})
	if !st.Committed || st.RemovedDeleteFiles == 0 || !maps.Equal(st.Snapshot.Offsets, before.Offsets) || st.Snapshot.ID == before.ID {
		t.Fatalf("compaction: %+v; want a new snapshot with the offsets %v", st, before.Offsets)
	}
	if files, deletes := checkLake(t, lt, f, "after compaction"); files != 1 || deletes != 0 {
		t.Fatalf("after compaction the lake has %d data and %d delete files, want 1 and 0", files, deletes)
	}
	if got := lakeRows(t, lt, f, st.Snapshot); !slices.Equal(got, rowsBefore) {
		t.Fatalf("compaction changed the rows or their offsets")
	}
	if again := compact(t, lt, lake.CompactOptions{}); again.Committed {
		t.Fatalf("a compaction of a compacted lake committed: %+v", again)
	}
	pkRounds(t, lt, f, 3)
	checkLake(t, lt, f, "rounds after compaction")
}

// A compaction packs a log table's files in runs of consecutive offsets, so
// a bucket still reads in offset order, also when a large file sits
// between small ones.
func TestCompactionKeepsOffsetOrder(t *testing.T) {
	lt, f := newLake(t, false)
	for r := range 12 {
		n := 3
		if r == 5 {
			n = 8000 // one large file in the middle
		}
		for i := range n {
			f.append(change{0, int64(r*10000 + i), fmt.Sprintf("%x", uint64(i)*0x9e3779b97f4a7c15)})
		}
		round(t, lt, f)
	}
	snap, _ := lt.Current()
	st := compact(t, lt, lake.CompactOptions{TargetFileSize: 32 << 10})
	if !st.Committed || st.RewrittenFiles != 11 {
		t.Fatalf("compaction: %+v; want the 11 small files rewritten and the large one kept", st)
	}
	recs, err := lt.Scan(context.Background(), f.mem, st.Snapshot.ID, nil, 0, []string{lake.ColOffset}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var offsets []int64
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		offsets = append(offsets, rec.Column(0).(*array.Int64).Int64Values()...)
		rec.Release()
	}
	if len(offsets) != int(snap.Offsets[0]) || !slices.IsSorted(offsets) {
		t.Fatalf("after compaction the bucket reads %d offsets (want %d), sorted: %v", len(offsets), snap.Offsets[0], slices.IsSorted(offsets))
	}
}

// A scan of the snapshot before a compaction, read while and after it
// commits, reads the rows of that snapshot: the replaced files stay until
// the snapshot expires.
func TestScanDuringCompactionIsExact(t *testing.T) {
	lt, f := newLake(t, true)
	pkRounds(t, lt, f, 20)
	snap, _ := lt.Current()
	want := lakeRows(t, lt, f, snap)
	recs, err := lt.Scan(context.Background(), f.mem, snap.ID, nil, 0, []string{"k", "v", lake.ColOffset}, nil)
	if err != nil {
		t.Fatal(err)
	}
	compact(t, lt, lake.CompactOptions{})
	var got []string
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			got = append(got, fmt.Sprintf("%d=%s@%d", rec.Column(0).(*array.Int64).Value(i), rec.Column(1).(*array.String).Value(i), rec.Column(2).(*array.Int64).Value(i)))
		}
		rec.Release()
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("a scan running across a compaction read %d rows, want %d", len(got), len(want))
	}
}

// A compaction that dies after writing its files and before its commit
// changes nothing: the lake keeps its snapshot, rows and files; rounds go
// on; maintenance deletes the files it left, and no live file goes missing.
func TestCompactionDyingBeforeCommitLosesNothing(t *testing.T) {
	errCrash := errors.New("the compaction dies before its commit")
	var crash bool
	lt, f := newLakeWith(t, true, lake.Options{BeforeCommit: func() error {
		if crash {
			return errCrash
		}
		return nil
	}})
	pkRounds(t, lt, f, 10)
	before, _ := lt.Current()
	crash = true
	_, err := lt.Compact(context.Background(), lake.CompactOptions{OrphanAge: -1})
	crash = false
	if !errors.Is(err, errCrash) {
		t.Fatalf("compaction: %v, want it to die before its commit", err)
	}
	if now, _ := lt.Current(); now.ID != before.ID {
		t.Fatalf("a compaction that died moved the lake from snapshot %d to %d", before.ID, now.ID)
	}
	checkLake(t, lt, f, "after the compaction died")
	pkRounds(t, lt, f, 2)
	checkLake(t, lt, f, "rounds after the compaction died")
	st := compact(t, lt, lake.CompactOptions{OrphanAge: time.Nanosecond})
	if st.OrphansDeleted == 0 {
		t.Fatalf("maintenance deleted no orphan file: %+v", st)
	}
	if files, deletes := checkLake(t, lt, f, "after maintenance"); files != 1 || deletes != 0 {
		t.Fatalf("after compaction the lake has %d data and %d delete files, want 1 and 0", files, deletes)
	}
}
