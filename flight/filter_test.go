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
	write(t, ts, "orders", 0, 5000, 20) // ids 0..99999, 5000 a batch
	before := logBytesRead(t, ts, "orders")
	if got := ids(t, ts, client.ScanRequest{Table: "orders", Columns: []string{"amount", "order_id"}}); len(got) != 100000 {
		t.Fatalf("unfiltered scan read %d rows", len(got))
	}
	mid := logBytesRead(t, ts, "orders")
	filter := json.RawMessage(`{"and": [{"ge": ["order_id", 25100]}, {"lt": ["order_id", 25300]}, {"ne": ["item", "item-3"]}]}`)
	sc, err := ts.cl.Scan(ctx, client.ScanRequest{Table: "orders", Filter: filter, Columns: []string{"amount", "order_id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	var got []int64
	var last client.BatchMeta
	for sc.Next() {
		rec := sc.RecordBatch()
		last = sc.Meta()
		for i := range int(rec.NumRows()) {
			got = append(got, rec.Column(1).(interface{ Value(int) int64 }).Value(i))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	want := 0
	for id := 25100; id < 25300; id++ {
		if id%7 != 3 {
			want++
		}
	}
	if len(got) != want {
		t.Fatalf("filtered scan returned %d rows, want %d", len(got), want)
	}
	for _, id := range got {
		if id < 25100 || id >= 25300 || id%7 == 3 {
			t.Fatalf("row %d does not match the filter", id)
		}
	}
	if last.Next != 100000 {
		t.Fatalf("the scan ended at next %d, want the end offset 100000", last.Next)
	}
	after := logBytesRead(t, ts, "orders")
	// One batch of twenty has matching rows: the other nineteen are skipped
	// after their small prefix.
	unfiltered, filtered := mid-before, after-mid
	t.Logf("bytes read: unfiltered %d, filtered %d (%.1fx fewer)", unfiltered, filtered, float64(unfiltered)/float64(filtered))
	if filtered*5 > unfiltered {
		t.Fatalf("the filtered scan read %d bytes, the unfiltered one %d: want at least 5 times fewer", filtered, unfiltered)
	}

	for _, bad := range []string{`{"gt": ["nope", 1]}`, `{"gt": ["order_id", "x"]}`, `{"between": ["order_id", 1, 2]}`} {
		_, err := ts.cl.Plan(ctx, client.ScanRequest{Table: "orders", Filter: json.RawMessage(bad)})
		wantCode(t, err, codes.InvalidArgument)
	}
}

// logBytesRead reports how many bytes scans have read from table's log.
func logBytesRead(t *testing.T, ts *testServer, table string) int64 {
	t.Helper()
	n, err := ts.eng.LogBytesRead(table)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
