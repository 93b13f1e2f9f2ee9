package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/scanread"
	"github.com/fluxgate-io/fluxgate/engine/internal/statevalues"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A snapshot read hands values from its iterating goroutine to the decoding
// one in chunks: every row arrives once and in key order, across chunk
// boundaries; a limit or a cancelled read stops it mid-chunk.
func TestSnapshotReadAcrossChunks(t *testing.T) {
	e, err := Open(t.Context(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), catalog.TableSpec{
		Table:      "kv",
		Columns:    []catalog.Column{{Name: "k", Type: "BIGINT"}, {Name: "v", Type: "STRING"}},
		PrimaryKey: []string{"k"},
	}, false); err != nil {
		t.Fatal(err)
	}
	const rows = scanread.SnapshotBatchRows + 2*statevalues.ChunkValues + 7
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memtest.Allocator(t), schema)
	for k := rows - 1; k >= 0; k-- { // written in descending order, read ascending
		b.Field(0).(*array.Int64Builder).Append(int64(k))
		b.Field(1).(*array.StringBuilder).Append(string(rune('a' + k%26)))
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	writeAll(t, e, "kv", []arrow.RecordBatch{rec})

	read := func(ctx context.Context, limit *int64, stopAfter int) ([]int64, error) {
		plan, err := e.PlanScan(t.Context(), protocol.ScanRequest{Table: "kv", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var keys []int64
		for _, tk := range plan.Tickets {
			rs, err := e.OpenRead(tk)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(ctx)
			err = rs.Run(ctx, func(rec arrow.RecordBatch, _ protocol.BatchMeta) error {
				ks := rec.Column(0).(*array.Int64)
				for i := range ks.Len() {
					keys = append(keys, ks.Value(i))
					if v := rec.Column(1).(*array.String).Value(i); v != string(rune('a'+ks.Value(i)%26)) {
						t.Fatalf("key %d has %q", ks.Value(i), v)
					}
				}
				if stopAfter > 0 && len(keys) >= stopAfter {
					cancel()
				}
				return nil
			})
			cancel()
			if err != nil {
				return keys, err
			}
		}
		return keys, nil
	}
	keys, err := read(context.Background(), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != rows {
		t.Fatalf("read %d rows, want %d", len(keys), rows)
	}
	for i, k := range keys {
		if k != int64(i) {
			t.Fatalf("row %d has key %d", i, k)
		}
	}
	limit := int64(statevalues.ChunkValues + 3)
	if keys, err = read(context.Background(), &limit, 0); err != nil || len(keys) != int(limit) {
		t.Fatalf("limit %d: read %d rows, err %v", limit, len(keys), err)
	}
	// Batches hold up to scanread.SnapshotBatchRows rows: cancel after the first.
	if keys, err = read(context.Background(), nil, 1); !errors.Is(err, context.Canceled) || len(keys) != scanread.SnapshotBatchRows {
		t.Fatalf("read cancelled after its first batch: %d rows, err %v", len(keys), err)
	}
}
