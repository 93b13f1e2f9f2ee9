package conformance_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
)

// TestLakeCrashBetweenFilesAndCommit kills the server (SIGKILL, from inside,
// at FLUXGATE_CRASH_POINT=lake-before-commit) after a tiering round wrote its
// Parquet files and before it committed them, once on a table's first round
// and once after a round that committed. After each restart the next round
// neither repeats nor skips a range: the lake holds every offset of the log
// exactly once, and a primary-key table's lake equals its rows.
func TestLakeCrashBetweenFilesAndCommit(t *testing.T) {
	srv := startServer(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := testContext(t, 2*time.Minute)
	dial := func() *client.Client {
		c, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := dial()
	defer func() { c.Close() }()
	logSpec := client.TableSpec{Table: "fluss.events", Columns: []client.Column{{Name: "id", Type: "BIGINT", NotNull: true}, {Name: "v", Type: "STRING"}},
		Options: map[string]string{"bucket.num": "3", "bucket.key": "id", "table.datalake.enabled": "true", "table.datalake.freshness": "1h"}}
	pkSpec := logSpec
	pkSpec.Table, pkSpec.PrimaryKey = "fluss.state", []string{"id"}
	for _, spec := range []client.TableSpec{logSpec, pkSpec} {
		if _, err := c.CreateTable(ctx, spec, false); err != nil {
			t.Fatal(err)
		}
	}
	next := 0
	write := func(n int) {
		t.Helper()
		for _, table := range []string{"fluss.events", "fluss.state"} {
			w, err := c.NewWriter(ctx, client.WriteRequest{Table: table})
			if err != nil {
				t.Fatal(err)
			}
			b := array.NewRecordBuilder(mem, mustSchema(t, logSpec))
			for i := range n {
				id := int64(next + i)
				if table == "fluss.state" {
					id %= 150 // updates of earlier rows too
				}
				b.Field(0).(*array.Int64Builder).Append(id)
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
		}
		next += n
	}
	crashRound := func(phase string) {
		t.Helper()
		before, _ := c.LakeSnapshot(ctx, "fluss.events")
		if err := srv.stop(); err != nil {
			t.Fatal(err)
		}
		// The round that dies may be tier-now's or the scheduler's.
		srv.env = []string{"FLUXGATE_CRASH_POINT=lake-before-commit"}
		if err := srv.start(); err != nil {
			t.Fatal(err)
		}
		c.Close()
		c = dial()
		_, err := c.TierNow(ctx, "fluss.events")
		if err == nil {
			t.Fatalf("%s: tier-now succeeded; the server should have died before its commit", phase)
		}
		select {
		case <-srv.exited:
			srv.cmd = nil
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the server did not die at the crash point (tier-now: %v)", phase, err)
		}
		if files := parquetFiles(t, filepath.Join(srv.dir, "lake", "fluss", "events", "data")); files == 0 {
			t.Fatalf("%s: no Parquet file was written before the crash", phase)
		}
		srv.env = nil
		if err := srv.start(); err != nil {
			t.Fatal(err)
		}
		c.Close()
		c = dial()
		after, err := c.LakeSnapshot(ctx, "fluss.events")
		if before == nil && status.Code(err) != codes.NotFound || before != nil && (err != nil || after.SnapshotID != before.SnapshotID) {
			t.Fatalf("%s: the crashed round changed the lake: snapshot before %v, after %v (%v)", phase, before, after, err)
		}
	}
	check := func(phase string) {
		t.Helper()
		for _, table := range []string{"fluss.events", "fluss.state"} {
			if _, err := c.TierNow(ctx, table); err != nil {
				t.Fatalf("%s: tier-now %s: %v", phase, table, err)
			}
		}
		hw, err := c.ListOffsets(ctx, "fluss.events", client.Latest, nil)
		if err != nil {
			t.Fatal(err)
		}
		offsets := lakeOffsets(t, c, "fluss.events$lake")
		for b, o := range hw {
			want := make([]int64, o)
			for i := range want {
				want[i] = int64(i)
			}
			if got := offsets[b]; !slices.Equal(got, want) {
				t.Fatalf("%s: bucket %d of the lake holds %d offsets (%s), want each of 0..%d once", phase, b, len(got), firstOf(got), o-1)
			}
		}
		got, want := rowsOf(t, c, "fluss.state$lake"), rowsOf(t, c, "fluss.state")
		if !slices.Equal(got, want) {
			t.Fatalf("%s: fluss.state$lake has %d rows, the table %d; they differ", phase, len(got), len(want))
		}
	}

	write(500)
	crashRound("first round")
	check("after a crash in the first round")
	write(500)
	crashRound("a later round")
	check("after a crash in a later round")
}

func mustSchema(t *testing.T, spec client.TableSpec) *arrow.Schema {
	s, err := spec.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func parquetFiles(t *testing.T, dir string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			n++
		}
		return nil
	})
	return n
}

// lakeOffsets reads the __offset of every lake row, by bucket, sorted.
func lakeOffsets(t *testing.T, c *client.Client, table string) map[int][]int64 {
	t.Helper()
	tbl, err := c.ReadAll(testContext(t, time.Minute), client.ScanRequest{Table: table, Columns: []string{"__bucket", "__offset"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	out := map[int][]int64{}
	tr := array.NewTableReader(tbl, 0)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		bs, os := rec.Column(0).(*array.Int32), rec.Column(1).(*array.Int64)
		for i := range bs.Len() {
			out[int(bs.Value(i))] = append(out[int(bs.Value(i))], os.Value(i))
		}
	}
	for b := range out {
		slices.Sort(out[b])
	}
	return out
}

// rowsOf reads (id, v) of a table or view as sorted lines.
func rowsOf(t *testing.T, c *client.Client, table string) []string {
	t.Helper()
	tbl, err := c.ReadAll(testContext(t, time.Minute), client.ScanRequest{Table: table, Columns: []string{"id", "v"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var out []string
	tr := array.NewTableReader(tbl, 0)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := range int(rec.NumRows()) {
			out = append(out, rec.Column(0).ValueStr(i)+" "+rec.Column(1).ValueStr(i))
		}
	}
	slices.Sort(out)
	return out
}

func firstOf(v []int64) string {
	if len(v) > 8 {
		return fmt.Sprint(v[:8]) + "..."
	}
	return fmt.Sprint(v)
}
