package engine

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Batches submitted before the earlier ones are committed merge with what
// those wrote: twenty batches, each adding 1 to the same keys, all submitted
// before any is awaited, end with sums of 20, and each key's changelog counts
// up 1, 2, ... 20 with no step repeated or skipped. Every other batch comes
// from an idempotent writer, whose changelog is appended at once, after those
// of the batches merged before it.
func TestWritesInFlightReadThroughEachOther(t *testing.T) {
	e, err := Open(t.Context(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), catalog.TableSpec{
		Table:      "counts",
		Columns:    []catalog.Column{{Name: "k", Type: "BIGINT"}, {Name: "n", Type: "BIGINT"}},
		PrimaryKey: []string{"k"},
		Options:    map[string]string{"table.merge-engine": "aggregation", "fields.n.agg": "sum", "bucket.num": "3"},
	}, false); err != nil {
		t.Fatal(err)
	}
	const keys, batches = 100, 20
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memtest.Allocator(t), schema)
	for k := range keys {
		b.Field(0).(*array.Int64Builder).Append(int64(k))
		b.Field(1).(*array.Int64Builder).Append(1)
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()

	plain, err := e.OpenWrite(protocol.WriteRequest{Table: "counts"})
	if err != nil {
		t.Fatal(err)
	}
	idempotent, err := e.OpenWrite(protocol.WriteRequest{Table: "counts", WriterID: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	var pending []*PendingWrite
	for i := range batches {
		ws := plain
		if i%2 == 1 {
			ws = idempotent
		}
		p, err := ws.Submit(context.Background(), rec)
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
	}
	for _, p := range pending {
		if _, err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}

	sums := map[int64]int64{}
	scan(t, e, protocol.ScanRequest{Table: "counts"}, func(rec arrow.RecordBatch) {
		ks, ns := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64)
		for i := range ks.Len() {
			sums[ks.Value(i)] = ns.Value(i)
		}
	})
	if len(sums) != keys {
		t.Fatalf("%d keys, want %d", len(sums), keys)
	}
	for k, n := range sums {
		if n != batches {
			t.Fatalf("key %d sums to %d, want %d", k, n, batches)
		}
	}
	// The changelog: per key +I 1, then -U n, +U n+1 for n = 1 .. 19.
	next := map[int64]int64{}
	scan(t, e, protocol.ScanRequest{Table: "counts$changelog", Startup: protocol.Position{Mode: protocol.PositionEarliest}}, func(rec arrow.RecordBatch) {
		cts, ks, ns := rec.Column(0).(*array.String), rec.Column(3).(*array.Int64), rec.Column(4).(*array.Int64)
		for i := range ks.Len() {
			k, n := ks.Value(i), ns.Value(i)
			switch cts.Value(i) {
			case "insert", "update_after":
				if n != next[k]+1 {
					t.Fatalf("key %d: %s %d after %d", k, cts.Value(i), n, next[k])
				}
				next[k] = n
			case "update_before":
				if n != next[k] {
					t.Fatalf("key %d: update_before %d, the row was %d", k, n, next[k])
				}
			default:
				t.Fatalf("key %d: %s", k, cts.Value(i))
			}
		}
	})
	for k := range int64(keys) {
		if next[k] != batches {
			t.Fatalf("key %d's changelog ends at %d, want %d", k, next[k], batches)
		}
	}
}

// scan reads a whole bounded scan.
func scan(t *testing.T, e *Engine, req protocol.ScanRequest, fn func(arrow.RecordBatch)) {
	t.Helper()
	plan, err := e.PlanScan(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range plan.Tickets {
		rs, err := e.OpenRead(tk)
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.Run(context.Background(), func(rec arrow.RecordBatch, _ protocol.BatchMeta) error {
			fn(rec)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}
