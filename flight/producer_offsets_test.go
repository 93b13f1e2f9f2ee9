package flight_test

import (
	"maps"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// A sink's first attempt registers its starting offsets; the next attempt
// finds them (already_exists), also after a server restart, and the end of
// the job deletes them.
func TestProducerOffsetsRegisterOnceAndSurviveRestart(t *testing.T) {
	ts := start(t, engine.Options{})
	if _, err := ts.cl.CreateTable(ctxT(t), pkSpec("agg", map[string]string{"bucket.num": "2"}), false); err != nil {
		t.Fatal(err)
	}
	first := map[int]int64{0: 4, 1: 0}
	created, err := ts.cl.RegisterProducerOffsets(ctxT(t), "job-1", "agg", first)
	if err != nil || !created {
		t.Fatalf("register: created %v, err %v; want created", created, err)
	}
	created, err = ts.cl.RegisterProducerOffsets(ctxT(t), "job-1", "agg", map[int]int64{0: 9, 1: 9})
	if err != nil || created {
		t.Fatalf("second register: created %v, err %v; want already there", created, err)
	}
	if got, err := ts.cl.ProducerOffsets(ctxT(t), "job-2", "agg"); err != nil || got != nil {
		t.Fatalf("another producer's offsets: %v, %v; want none", got, err)
	}

	ts.restart(t)
	got, err := ts.cl.ProducerOffsets(ctxT(t), "job-1", "agg")
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, first) {
		t.Fatalf("after restart: %v, want the first registration %v", got, first)
	}

	if err := ts.cl.DeleteProducerOffsets(ctxT(t), "job-1", "agg"); err != nil {
		t.Fatal(err)
	}
	if err := ts.cl.DeleteProducerOffsets(ctxT(t), "job-1", "agg"); err != nil {
		t.Fatalf("deleting nothing: %v", err)
	}
	if got, err := ts.cl.ProducerOffsets(ctxT(t), "job-1", "agg"); err != nil || got != nil {
		t.Fatalf("after delete: %v, %v; want none", got, err)
	}
}

// Offsets registered for a table do not outlive it: a table created again
// under the name starts without them.
func TestProducerOffsetsOfADroppedTable(t *testing.T) {
	ts := start(t, engine.Options{})
	spec := pkSpec("agg", nil)
	if _, err := ts.cl.CreateTable(ctxT(t), spec, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.cl.RegisterProducerOffsets(ctxT(t), "job-1", "agg", map[int]int64{0: 3}); err != nil {
		t.Fatal(err)
	}
	if err := ts.cl.DropTable(ctxT(t), "agg", false); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.cl.CreateTable(ctxT(t), spec, false); err != nil {
		t.Fatal(err)
	}
	if got, err := ts.cl.ProducerOffsets(ctxT(t), "job-1", "agg"); err != nil || got != nil {
		t.Fatalf("offsets of the dropped table: %v, %v; want none", got, err)
	}
}

func TestProducerOffsetsInvalid(t *testing.T) {
	ts := start(t, engine.Options{})
	if _, err := ts.cl.CreateTable(ctxT(t), pkSpec("agg", nil), false); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		producer, table string
		offsets         map[int]int64
		want            codes.Code
	}{
		"no producer id":   {"", "agg", map[int]int64{0: 0}, codes.InvalidArgument},
		"no offsets":       {"p", "agg", nil, codes.InvalidArgument},
		"a missing bucket": {"p", "agg", map[int]int64{1: 0}, codes.InvalidArgument},
		"a negative one":   {"p", "agg", map[int]int64{0: -1}, codes.InvalidArgument},
		"no such table":    {"p", "nonesuch", map[int]int64{0: 0}, codes.NotFound},
	} {
		_, err := ts.cl.RegisterProducerOffsets(ctxT(t), c.producer, c.table, c.offsets)
		if status.Code(err) != c.want {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

// Undo of some buckets leaves the others alone: a sink's subtasks each undo
// the buckets they own.
func TestUndoOfSomeBuckets(t *testing.T) {
	ts := start(t, engine.Options{})
	if _, err := ts.cl.CreateTable(ctxT(t), pkSpec("t", map[string]string{"bucket.num": "2"}), false); err != nil {
		t.Fatal(err)
	}
	req := client.WriteRequest{Table: "t"}
	for k := 1; k <= 8; k++ { // keys in both buckets, each written twice
		writePK(t, ts, req, pkRows(ts.mem, []string{"k", "v", "s"}, []any{k, 1.0, nil}))
	}
	before, err := ts.cl.ListOffsets(ctxT(t), "t", client.Latest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 2 || before[0] == 0 || before[1] == 0 {
		t.Fatalf("offsets %v: want keys in both buckets", before)
	}
	for k := 1; k <= 8; k++ {
		writePK(t, ts, req, pkRows(ts.mem, []string{"k", "v", "s"}, []any{k, 2.0, nil}))
	}
	res, err := ts.cl.Undo(ctxT(t), "t", map[int]int64{0: before[0]})
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(res.Offsets)); !slices.Equal(got, []int{0}) {
		t.Fatalf("undo answered offsets of buckets %v, want [0]", got)
	}
	rows := dump(t, ts, client.ScanRequest{Table: "t", Columns: []string{"v"}})
	ones, twos := 0, 0
	for _, r := range rows {
		switch r {
		case "1":
			ones++
		case "2":
			twos++
		}
	}
	if ones+twos != 8 || ones == 0 || twos == 0 || int64(ones) != res.UndoneKeys {
		t.Fatalf("after undo of bucket 0: %d keys at 1 and %d at 2 (undone %d); want bucket 0's keys back at 1, bucket 1's at 2", ones, twos, res.UndoneKeys)
	}
	if _, err := ts.cl.Undo(ctxT(t), "t", map[int]int64{2: 0}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("undo of a bucket that does not exist: %v, want INVALID_ARGUMENT", err)
	}
}
