package flight_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// Batches sent compressed (or not) read back as sent from a table of every
// codec, whether a ZSTD or LZ4 table stores them as received (one bucket,
// the columns in any order) or splits them by bucket and encodes the parts,
// and whether the scan asks for batches as stored, uncompressed or
// compressed with either codec.
func TestCompressedWritesReadBack(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	// The stream sends the table's columns in another order.
	sentSchema := arrow.NewSchema([]arrow.Field{ordersSchema.Field(2), ordersSchema.Field(0), ordersSchema.Field(1)}, nil)
	for _, table := range []struct{ codec, bucketKey string }{{"zstd", ""}, {"zstd", "order_id"}, {"none", ""}, {"lz4_frame", ""}} {
		for _, sent := range []string{"zstd", "lz4_frame", "none", "default"} {
			name := fmt.Sprintf("t_%s_%s_%s", table.codec, table.bucketKey, sent)
			spec := ordersSpec(name, 2, table.bucketKey)
			spec.Options["table.log.arrow.compression.type"] = table.codec
			if _, err := ts.cl.CreateTable(ctx, spec, false); err != nil {
				t.Fatal(err)
			}
			var opts []client.WriterOption
			if sent != "default" {
				opts = append(opts, client.WithWriteCompression(sent))
			}
			w, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: name}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				rec := orders(ts.mem, i*2000, 2000)
				reordered := array.NewRecordBatch(sentSchema, []arrow.Array{rec.Column(2), rec.Column(0), rec.Column(1)}, rec.NumRows())
				err := w.Send(reordered)
				reordered.Release()
				rec.Release()
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, read := range []string{"", "none", "zstd", "lz4_frame"} {
				checkOrders(t, ts, client.ScanRequest{Table: name, Compression: read}, 6000)
			}
		}
	}
}

// checkOrders scans req and checks that it returns the orders 0..n-1.
func checkOrders(t *testing.T, ts *testServer, req client.ScanRequest, n int) {
	t.Helper()
	sc, err := ts.cl.Scan(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	var ids []int64
	for sc.Next() {
		rec := sc.RecordBatch()
		id, item, amount := column[*array.Int64](rec, "order_id"), column[*array.String](rec, "item"), column[*array.Float64](rec, "amount")
		for i := range id.Len() {
			k := id.Value(i)
			if item.Value(i) != fmt.Sprintf("item-%d", k%7) || amount.Value(i) != float64(k)*1.5 {
				t.Fatalf("%s (read %q): order %d has item %q, amount %v", req.Table, req.Compression, k, item.Value(i), amount.Value(i))
			}
			ids = append(ids, k)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s (read %q): %v", req.Table, req.Compression, err)
	}
	slices.Sort(ids)
	if len(ids) != n || ids[0] != 0 || ids[n-1] != int64(n-1) || len(slices.Compact(ids)) != n {
		t.Fatalf("%s (read %q): %d orders, want 0..%d once each", req.Table, req.Compression, len(ids), n-1)
	}
}
