package flight_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// table-stats answers a primary-key table's current rows after updates and
// deletes, per bucket, and refuses a view.
func TestTableStatsAction(t *testing.T) {
	ts := start(t, engine.Options{})
	if _, err := ts.cl.CreateTable(ctxT(t), pkSpec("fruit", map[string]string{"bucket.num": "2"}), false); err != nil {
		t.Fatal(err)
	}
	all := []string{"k", "v", "s"}
	writePK(t, ts, client.WriteRequest{Table: "fruit"}, pkRows(ts.mem, all, []any{1, 2.0, "apple"}, []any{2, 1.0, "pear"}, []any{3, 5.0, "fig"}))
	writePK(t, ts, client.WriteRequest{Table: "fruit"}, pkRows(ts.mem, all, []any{1, 4.0, "banana"}))
	writePK(t, ts, client.WriteRequest{Table: "fruit", Mode: client.ModeDelete}, pkRows(ts.mem, []string{"k"}, []any{2}, []any{9}))
	got, err := ts.cl.TableStats(ctxT(t), "fruit")
	if err != nil {
		t.Fatal(err)
	}
	if got.RowCount != 2 || len(got.Buckets) != 2 || got.Buckets[0]+got.Buckets[1] != 2 {
		t.Fatalf("table-stats %+v, want 2 rows over buckets 0 and 1", got)
	}
	if _, err := ts.cl.TableStats(ctxT(t), "fruit$changelog"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("table-stats of a view: %v, want FAILED_PRECONDITION", err)
	}
}
