package flight_test

import (
	"encoding/json"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// A filtered scan returns exactly the matching rows, skips the batches whose
// statistics rule them out, and still ends at the log's end offset.
func TestFilteredScan(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 1000, 20) // ids 0..19999, one batch per thousand
	filter := json.RawMessage(`{"and": [{"ge": ["order_id", 5100]}, {"lt": ["order_id", 5300]}, {"ne": ["item", "item-3"]}]}`)
	sc, err := ts.cl.Scan(ctx, client.ScanRequest{Table: "orders", Filter: filter, Columns: []string{"amount", "order_id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	var got []int64
	var last client.BatchMeta
	batches := 0
	for sc.Next() {
		rec := sc.RecordBatch()
		batches++
		last = sc.Meta()
		for i := range int(rec.NumRows()) {
			got = append(got, rec.Column(1).(interface{ Value(int) int64 }).Value(i))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	want := 0
	for id := 5100; id < 5300; id++ {
		if id%7 != 3 {
			want++
		}
	}
	if len(got) != want {
		t.Fatalf("filtered scan returned %d rows, want %d", len(got), want)
	}
	for _, id := range got {
		if id < 5100 || id >= 5300 || id%7 == 3 {
			t.Fatalf("row %d does not match the filter", id)
		}
	}
	if last.Next != 20000 {
		t.Fatalf("the scan ended at next %d, want the end offset 20000", last.Next)
	}

	for _, bad := range []string{`{"gt": ["nope", 1]}`, `{"gt": ["order_id", "x"]}`, `{"between": ["order_id", 1, 2]}`} {
		_, err := ts.cl.Plan(ctx, client.ScanRequest{Table: "orders", Filter: json.RawMessage(bad)})
		wantCode(t, err, codes.InvalidArgument)
	}
}
