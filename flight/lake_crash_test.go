package flight_test

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// A tiering round that dies after writing its Parquet files and before
// committing them (lake.Options.BeforeCommit fails the commit there, as a
// crash would: the lake's snapshot is the only progress record, and nothing
// else of the round is kept) changes nothing in the lake, once on a table's
// first round and once after a round that committed. After a restart the
// next round neither repeats nor skips a range: the lake holds every offset
// of the log exactly once, and for a primary-key table the lake equals the
// table's current rows, each key once.
func TestLakeRoundDyingBetweenFilesAndCommitLosesAndRepeatsNothing(t *testing.T) {
	var crash atomic.Bool
	errCrash := errors.New("the round dies before its commit")
	ts := start(t, engine.Options{Lake: engine.LakeOptions{BeforeCommit: func() error {
		if crash.Load() {
			return errCrash
		}
		return nil
	}}})
	ctx := ctxT(t)
	logSpec := client.TableSpec{Table: "fluss.events", Columns: []client.Column{{Name: "id", Type: "BIGINT", Nullable: new(false)}, {Name: "v", Type: "STRING"}},
		Options: map[string]string{"bucket.num": "3", "bucket.key": "id", "table.datalake.enabled": "true", "table.datalake.freshness": "1h"}}
	if _, err := ts.cl.CreateTable(ctx, logSpec, false); err != nil {
		t.Fatal(err)
	}
	schema, err := logSpec.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	writeEvents := func(n int) {
		t.Helper()
		w, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: "fluss.events"})
		if err != nil {
			t.Fatal(err)
		}
		b := array.NewRecordBuilder(ts.mem, schema)
		for i := range n {
			b.Field(0).(*array.Int64Builder).Append(int64(next + i))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("v%d", next+i))
		}
		rec := b.NewRecordBatch()
		b.Release()
		_, err = w.Write(rec)
		rec.Release()
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		next += n
	}
	dieInRound := func(table, phase string) {
		t.Helper()
		before, _ := ts.cl.LakeSnapshot(ctx, "fluss."+table)
		crash.Store(true)
		_, err := ts.cl.TierNow(ctx, "fluss."+table)
		crash.Store(false)
		if err == nil || !strings.Contains(err.Error(), errCrash.Error()) {
			t.Fatalf("%s: tier-now: %v, want the round to die before its commit", phase, err)
		}
		if files := parquetFiles(t, filepath.Join(ts.dir, "lake", "fluss", table, "data")); files == 0 {
			t.Fatalf("%s: no Parquet file was written before the commit", phase)
		}
		ts.restart(t)
		after, err := ts.cl.LakeSnapshot(ctx, "fluss."+table)
		if before == nil {
			wantCode(t, err, codes.NotFound)
		} else if err != nil || after.SnapshotID != before.SnapshotID {
			t.Fatalf("%s: the round that died changed the lake: snapshot before %v, after %v (%v)", phase, before, after, err)
		}
	}
	check := func(phase string) {
		t.Helper()
		if _, err := ts.cl.TierNow(ctx, "fluss.events"); err != nil {
			t.Fatalf("%s: tier-now: %v", phase, err)
		}
		hw, err := ts.cl.ListOffsets(ctx, "fluss.events", client.Latest, nil)
		if err != nil {
			t.Fatal(err)
		}
		offsets := lakeOffsetsByBucket(t, ts, "fluss.events$lake")
		for b, o := range hw {
			if got := offsets[b]; !slices.Equal(got, span(0, int(o))) {
				t.Fatalf("%s: bucket %d of the lake holds %d offsets, want each of 0..%d once", phase, b, len(got), o-1)
			}
		}
	}

	writeEvents(500)
	dieInRound("events", "first round")
	check("after a round died in the first round")
	writeEvents(500)
	dieInRound("events", "a later round")
	check("after a round died in a later round")

	pk := pkSpec("fruit", map[string]string{"bucket.num": "2", "table.datalake.enabled": "true", "table.datalake.freshness": "1h"})
	if _, err := ts.cl.CreateTable(ctx, pk, false); err != nil {
		t.Fatal(err)
	}
	all := []string{"k", "v", "s"}
	checkPK := func(phase string) {
		t.Helper()
		if _, err := ts.cl.TierNow(ctx, "fruit"); err != nil {
			t.Fatalf("%s: tier-now: %v", phase, err)
		}
		want := dump(t, ts, client.ScanRequest{Table: "fruit"})
		slices.Sort(want)
		got := dump(t, ts, client.ScanRequest{Table: "fruit$lake", Columns: all})
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: the lake holds %q, want the table's rows %q", phase, got, want)
		}
	}
	writePK(t, ts, client.WriteRequest{Table: "fruit"},
		pkRows(ts.mem, all, []any{1, 1.0, "apple"}, []any{2, 2.0, "banana"}, []any{3, 3.0, "cherry"}))
	dieInRound("fruit", "first round of a primary-key table")
	checkPK("after a round of a primary-key table died in its first round")
	writePK(t, ts, client.WriteRequest{Table: "fruit"}, pkRows(ts.mem, all, []any{2, 20.0, "banana2"}, []any{4, 4.0, "date"}))
	writePK(t, ts, client.WriteRequest{Table: "fruit", Mode: "delete"}, pkRows(ts.mem, []string{"k"}, []any{3}))
	dieInRound("fruit", "a later round of a primary-key table")
	checkPK("after a round of a primary-key table died in a later round")
}

func parquetFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if strings.HasSuffix(p, ".parquet") {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// lakeOffsetsByBucket reads the __offset of every lake row, by bucket,
// sorted.
func lakeOffsetsByBucket(t *testing.T, ts *testServer, table string) map[int][]int64 {
	t.Helper()
	out := map[int][]int64{}
	eachBatch(t, ts, client.ScanRequest{Table: table, Columns: []string{"__bucket", "__offset"}}, func(rec arrow.RecordBatch) {
		bs, offs := rec.Column(0).(*array.Int32), rec.Column(1).(*array.Int64)
		for i := range bs.Len() {
			out[int(bs.Value(i))] = append(out[int(bs.Value(i))], offs.Value(i))
		}
	})
	for b := range out {
		slices.Sort(out[b])
	}
	return out
}

func eachBatch(t *testing.T, ts *testServer, req client.ScanRequest, fn func(arrow.RecordBatch)) {
	t.Helper()
	sc, err := ts.cl.Scan(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	for sc.Next() {
		fn(sc.RecordBatch())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
