package flight_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/hadoop"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// liveLakeFiles counts the data files of each partition, and the delete
// files, of a lake table's current snapshot, read with iceberg-go's own
// catalog.
func liveLakeFiles(t *testing.T, ts *testServer, table string) (dataPerPartition map[string]int, deletes int) {
	t.Helper()
	ctx := ctxT(t)
	cat, err := hadoop.NewCatalog("check", filepath.Join(ts.dir, "lake"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, icetable.Identifier{"fluss", table})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	dataPerPartition = map[string]int{}
	for _, m := range manifests {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			if df := e.DataFile(); df.ContentType() == iceberg.EntryContentData {
				dataPerPartition[fmt.Sprint(df.Partition())]++
			} else {
				deletes++
			}
		}
	}
	return dataPerPartition, deletes
}

// compact-lake packs 40 small rounds of a primary-key table (the tiering
// package's test packs 100) into one data file per bucket partition with
// no delete files, keeping the lake's rows equal to the table's. A read
// planned before it and run after it reads the planned snapshot exactly. A
// compaction that dies before its commit changes nothing, and later rounds
// and compactions go on.
func TestCompactLake(t *testing.T) {
	var crash atomic.Bool
	errCrash := errors.New("the compaction dies before its commit")
	ts := start(t, engine.Options{Lake: engine.LakeOptions{BeforeCommit: func() error {
		if crash.Load() {
			return errCrash
		}
		return nil
	}}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // 40 rounds under -race on a busy machine
	defer cancel()
	pk := pkSpec("fruit", map[string]string{"bucket.num": "2", "table.datalake.enabled": "true", "table.datalake.freshness": "1h"})
	if _, err := ts.cl.CreateTable(ctx, pk, false); err != nil {
		t.Fatal(err)
	}
	all := []string{"k", "v", "s"}
	rounds := func(from, n int) {
		t.Helper()
		for r := from; r < from+n; r++ {
			rows := [][]any{{r * 4, float64(r), "new"}, {r*4 + 1, float64(r), "new"}}
			if r > 0 {
				rows = append(rows, []any{(r - 1) * 4, float64(r), "updated"})
			}
			writePK(t, ts, client.WriteRequest{Table: "fruit"}, pkRows(ts.mem, all, rows...))
			if r%5 == 4 {
				writePK(t, ts, client.WriteRequest{Table: "fruit", Mode: "delete"}, pkRows(ts.mem, []string{"k"}, []any{r*4 + 1}))
			}
			if _, err := ts.cl.TierNow(ctx, "fruit"); err != nil {
				t.Fatal(err)
			}
		}
	}
	lakeEqualsTable := func(phase string) {
		t.Helper()
		want := dump(t, ts, client.ScanRequest{Table: "fruit"})
		got := dump(t, ts, client.ScanRequest{Table: "fruit$lake", Columns: all})
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: the lake holds %d rows, want the table's %d:\n%q\n%q", phase, len(got), len(want), got, want)
		}
	}
	rounds(0, 40)
	lakeEqualsTable("after 40 rounds")
	before, err := ts.cl.LakeSnapshot(ctx, "fruit")
	if err != nil {
		t.Fatal(err)
	}

	crash.Store(true)
	_, err = ts.cl.CompactLake(ctx, "fruit")
	crash.Store(false)
	if err == nil || !strings.Contains(err.Error(), errCrash.Error()) {
		t.Fatalf("compact-lake: %v, want it to die before its commit", err)
	}
	if now, err := ts.cl.LakeSnapshot(ctx, "fruit"); err != nil || now.SnapshotID != before.SnapshotID {
		t.Fatalf("a compaction that died moved the lake from snapshot %d to %v (%v)", before.SnapshotID, now, err)
	}
	lakeEqualsTable("after a compaction died")

	plan, err := ts.cl.Plan(ctx, client.ScanRequest{Table: "fruit$lake", Columns: all})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ts.cl.CompactLake(ctx, "fruit")
	if err != nil {
		t.Fatal(err)
	}
	if res.SnapshotID == before.SnapshotID || res.RewrittenFiles < 40 || res.RemovedDeleteFiles == 0 || fmt.Sprint(res.Offsets) != fmt.Sprint(before.Offsets) {
		t.Fatalf("compact-lake: %+v; want a new snapshot with the offsets %v", res, before.Offsets)
	}
	perPartition, deletes := liveLakeFiles(t, ts, "fruit")
	if len(perPartition) != 2 || deletes != 0 {
		t.Fatalf("after compaction the lake has data files %v and %d delete files, want one per bucket and none", perPartition, deletes)
	}
	for p, n := range perPartition {
		if n > 1 {
			t.Fatalf("after compaction partition %s has %d data files", p, n)
		}
	}
	sc := ts.cl.ScanPlanned(ctx, plan)
	var planned int
	for sc.Next() {
		planned += int(sc.RecordBatch().NumRows())
	}
	sc.Release()
	if err := sc.Err(); err != nil {
		t.Fatalf("a read planned before the compaction: %v", err)
	}
	if want := len(dump(t, ts, client.ScanRequest{Table: "fruit"})); planned != want {
		t.Fatalf("a read planned before the compaction read %d rows, want %d", planned, want)
	}
	lakeEqualsTable("after compaction")
	rounds(40, 3)
	lakeEqualsTable("rounds after compaction")
	ts.restart(t)
	rounds(43, 2)
	lakeEqualsTable("rounds after a restart")
}
