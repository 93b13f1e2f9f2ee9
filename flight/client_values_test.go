package flight_test

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// String values read from a ZSTD table sent as stored alias the batch body,
// as arrow-go's do; a caller may keep them after releasing the record, as
// with any Go memory, and they must not change when later batches arrive.
func TestStringsKeptAfterReleaseStayIntact(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	const n, batches = 500, 20
	write(t, ts, "orders", 0, n, batches)
	for _, codec := range []string{"", "zstd"} {
		sc, err := ts.cl.Scan(ctx, client.ScanRequest{Table: "orders", Compression: codec}, client.WithConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		for sc.Next() {
			items := sc.RecordBatch().Column(1).(*array.String)
			for i := range items.Len() {
				kept = append(kept, items.Value(i)) // not copied
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		sc.Release()
		if len(kept) != n*batches {
			t.Fatalf("compression %q: read %d values, want %d", codec, len(kept), n*batches)
		}
		for i, v := range kept {
			if want := fmt.Sprintf("item-%d", i%7); v != want {
				t.Fatalf("compression %q: value %d is %q after later batches, want %q", codec, i, v, want)
			}
		}
	}
}
