package engine

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// openZstdEvents opens an engine with a checked allocator, checked for
// leaks once the test has closed it, and creates the ZSTD log table events.
func openZstdEvents(t *testing.T, columns ...catalog.Column) (*Engine, memory.Allocator) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	e, err := Open(t.Context(), t.TempDir(), Options{Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.CreateTable(t.Context(), catalog.TableSpec{
		Table:   "events",
		Columns: columns,
		Options: map[string]string{"table.log.arrow.compression.type": "zstd"},
	}, false); err != nil {
		t.Fatal(err)
	}
	return e, mem
}

// A bounded scan of a compressed log decodes frames ahead of the one it
// sends. Whether it reads the whole range or stops at a limit within the
// second frame, it sends exactly its rows, in order, and releases every
// frame it decoded ahead for nothing.
func TestScanAheadOfCompressedFrames(t *testing.T) {
	e, mem := openZstdEvents(t, catalog.Column{Name: "id", Type: "BIGINT"})
	const frames, rows = 6, 1000
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	var recs []arrow.RecordBatch
	for f := range frames {
		b := array.NewInt64Builder(mem)
		for i := range rows {
			b.Append(int64(f*rows + i))
		}
		col := b.NewArray()
		b.Release()
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{col}, rows))
		col.Release()
	}
	writeAll(t, e, "events", recs)
	for _, r := range recs {
		r.Release()
	}
	for _, limit := range []int64{-1, rows + 10, 3} {
		req := protocol.ScanRequest{Table: "events", Startup: protocol.Position{Mode: protocol.PositionEarliest}}
		want := int64(frames * rows)
		if limit >= 0 {
			req.Limit, want = &limit, limit
		}
		var ids []int64
		scan(t, e, req, func(rec arrow.RecordBatch) {
			ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		})
		if int64(len(ids)) != want {
			t.Fatalf("limit %d: %d rows, want %d", limit, len(ids), want)
		}
		for i, id := range ids {
			if id != int64(i) {
				t.Fatalf("limit %d: row %d has id %d", limit, i, id)
			}
		}
	}
	// A cancelled scan stops its read-ahead too.
	plan, err := e.PlanScan(t.Context(), protocol.ScanRequest{Table: "events", Startup: protocol.Position{Mode: protocol.PositionEarliest}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rs, err := e.OpenRead(plan.Tickets[0])
	if err != nil {
		t.Fatal(err)
	}
	err = rs.Run(ctx, func(arrow.RecordBatch, protocol.BatchMeta) error {
		cancel()
		return nil
	})
	if err != context.Canceled {
		t.Fatalf("cancelled scan: %v", err)
	}
}
