package flight_test

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// A follow from the log's end sends its schema at once, not with its first
// batch or heartbeat: pyarrow's do_get waits for the schema. The heartbeat
// is an hour here, so only the schema sent first can arrive; the context's
// deadline only ends the test if it does not.
func TestFollowSendsItsSchemaAtOnce(t *testing.T) {
	ts := start(t, engine.Options{FollowHeartbeat: time.Hour})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 2, ""), false); err != nil {
		t.Fatal(err)
	}
	plan, err := ts.cl.Plan(ctx, client.ScanRequest{Table: "orders", Startup: client.Latest, Stop: client.Unbounded})
	if err != nil {
		t.Fatal(err)
	}
	cl := rawClient(t, ts)
	for _, ep := range plan.Endpoints {
		stream, err := cl.DoGet(ctx, &flight.Ticket{Ticket: ep.Ticket})
		if err != nil {
			t.Fatal(err)
		}
		r, err := flight.NewRecordReader(stream) // reads the schema message
		if err != nil {
			t.Fatalf("the follow's first message: %v", err)
		}
		if !r.Schema().Equal(plan.Schema) {
			t.Errorf("the follow sent schema %s, the plan says %s", r.Schema(), plan.Schema)
		}
		r.Release()
	}
}

// A limit with an unbounded stop is refused: the limited plan reads the
// buckets in turn, and a follow of the first never ends. Partitioned tables
// are planned by their own path and refuse it too.
func TestFollowWithLimitRefused(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 2, ""), false); err != nil {
		t.Fatal(err)
	}
	parted := ordersSpec("parted", 2, "")
	parted.PartitionKeys = []string{"item"}
	if _, err := ts.cl.CreateTable(ctx, parted, false); err != nil {
		t.Fatal(err)
	}
	limit := int64(5)
	for _, table := range []string{"orders", "parted"} {
		_, err := ts.cl.Plan(ctx, client.ScanRequest{Table: table, Stop: client.Unbounded, Limit: &limit})
		wantInvalid(t, table+": limit with stop none", err, "limit", `stop "none"`)
		if _, err := ts.cl.Plan(ctx, client.ScanRequest{Table: table, Stop: client.Latest, Limit: &limit}); err != nil {
			t.Errorf("%s: limit with stop latest: %v", table, err)
		}
	}
}
