package flight_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// A $changelog read of system columns alone reads no table column: each of
// them, and all three together, gives one value a written row, in log order.
func TestChangelogSystemColumnsAlone(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 5, 2)
	for _, codec := range []string{"", "none", "zstd"} {
		for _, cols := range [][]string{{"_commit_timestamp"}, {"_log_offset"}, {"_change_type"}, {"_change_type", "_log_offset", "_commit_timestamp"}} {
			tbl, err := ts.cl.ReadAll(ctx, client.ScanRequest{Table: "orders$changelog", Columns: cols, Compression: codec})
			if err != nil {
				t.Fatalf("%v: %v", cols, err)
			}
			if tbl.NumRows() != 10 || int(tbl.NumCols()) != len(cols) {
				t.Fatalf("%v: %d rows of %d columns, want 10 of %d", cols, tbl.NumRows(), tbl.NumCols(), len(cols))
			}
			if i := tbl.Schema().FieldIndices("_log_offset"); len(i) == 1 {
				var got []int64
				for _, c := range tbl.Column(i[0]).Data().Chunks() {
					got = append(got, c.(*array.Int64).Int64Values()...)
				}
				for k, off := range got {
					if off != int64(k) {
						t.Fatalf("%v: offsets %v, want 0..9", cols, got)
					}
				}
			}
			tbl.Release()
		}
	}
}
