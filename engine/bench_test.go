package engine

// Benchmarks of primary-key tables, each beside its baseline in the same run
// (docs/benchmarks.md):
//
//	BenchmarkAggregateUpsert/pebble  the same keys and values written blindly into the same pebble store, 10K a batch
//	BenchmarkAggregateUpsert/engine  upserts into an aggregation table (sum and rbm32): merge, changelog, fsync
//	BenchmarkSnapshotRead/log        a full scan of a log table holding the rows
//	BenchmarkSnapshotRead/log-zstd   the same scan of a ZSTD log table: frames decode ahead of the one sent
//	BenchmarkSnapshotRead/snapshot   a plain-name read of a primary-key table holding the same rows

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/protocol"
)

func benchKeys() int {
	if s := os.Getenv("FLUXGATE_BENCH_KEYS"); s != "" {
		var n int
		fmt.Sscan(s, &n)
		return n
	}
	return 1_000_000
}

const benchBatchRows = 10_000

var aggSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "bm", Type: arrow.BinaryTypes.Binary, Nullable: true},
}, nil)

// aggBatches builds keys 0..n-1 in batches, each row adding 1 to n and its
// key to a one-element bitmap.
func aggBatches(n int) []arrow.RecordBatch {
	var recs []arrow.RecordBatch
	bm := roaring.New()
	var buf bytes.Buffer
	for from := 0; from < n; from += benchBatchRows {
		b := array.NewRecordBuilder(memtest.Shared, aggSchema)
		for k := from; k < min(from+benchBatchRows, n); k++ {
			b.Field(0).(*array.Int64Builder).Append(int64(k))
			b.Field(1).(*array.Int64Builder).Append(1)
			bm.Clear()
			bm.Add(uint32(k))
			buf.Reset()
			bm.WriteTo(&buf)
			b.Field(2).(*array.BinaryBuilder).Append(buf.Bytes())
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	return recs
}

func openBench(b *testing.B) *Engine {
	e, err := Open(b.Context(), b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return e
}

func createAgg(b *testing.B, e *Engine) {
	_, err := e.CreateTable(b.Context(), catalog.TableSpec{
		Table:      "agg",
		Columns:    []catalog.Column{{Name: "k", Type: "BIGINT"}, {Name: "n", Type: "BIGINT"}, {Name: "bm", Type: "BYTES"}},
		PrimaryKey: []string{"k"},
		Options:    map[string]string{"table.merge-engine": "aggregation", "fields.n.agg": "sum", "fields.bm.agg": "rbm32"},
	}, false)
	if err != nil {
		b.Fatal(err)
	}
}

// writeAll writes recs as a Flight DoPut stream does: up to 8 batches
// submitted ahead of the one awaited.
func writeAll(b testing.TB, e *Engine, table string, recs []arrow.RecordBatch) {
	ws, err := e.OpenWrite(protocol.WriteRequest{Table: table})
	if err != nil {
		b.Fatal(err)
	}
	var pending []*PendingWrite
	for _, r := range recs {
		p, err := ws.Submit(context.Background(), r)
		if err != nil {
			b.Fatal(err)
		}
		if pending = append(pending, p); len(pending) == 8 {
			if _, err := pending[0].Wait(); err != nil {
				b.Fatal(err)
			}
			pending = pending[1:]
		}
	}
	for _, p := range pending {
		if _, err := p.Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAggregateUpsert(b *testing.B) {
	n := benchKeys()
	recs := aggBatches(n)
	b.Run("pebble", func(b *testing.B) {
		// The same store with the same options, written blindly: no reads,
		// no merge, no changelog.
		store, err := kv.Open(b.TempDir(), kv.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		for b.Loop() {
			for _, r := range recs {
				txn := store.NewTxn()
				keys := r.Column(0).(*array.Int64)
				bms := r.Column(2).(*array.Binary)
				for i := range int(r.NumRows()) {
					key := kv.RowKey(nil, 1, 0, binary.BigEndian.AppendUint64(nil, uint64(keys.Value(i))))
					val := binary.LittleEndian.AppendUint64(append([]byte{1, 3, 0}, bms.Value(i)...), 1)
					if err := txn.Set(key, val); err != nil {
						b.Fatal(err)
					}
				}
				if err := txn.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("engine", func(b *testing.B) {
		e := openBench(b)
		createAgg(b, e)
		for b.Loop() {
			writeAll(b, e, "agg", recs)
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

func readAllRows(b *testing.B, e *Engine, table string) int64 {
	plan, err := e.PlanScan(b.Context(), protocol.ScanRequest{Table: table})
	if err != nil {
		b.Fatal(err)
	}
	var rows int64
	for _, tk := range plan.Tickets {
		rs, err := e.OpenRead(tk)
		if err != nil {
			b.Fatal(err)
		}
		err = rs.Run(context.Background(), func(rec arrow.RecordBatch, _ protocol.BatchMeta) error {
			rows += rec.NumRows()
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return rows
}

func BenchmarkSnapshotRead(b *testing.B) {
	n := benchKeys()
	recs := aggBatches(n)
	e := openBench(b)
	createAgg(b, e)
	writeAll(b, e, "agg", recs)
	if _, err := e.CreateTable(b.Context(), catalog.TableSpec{
		Table:   "log",
		Columns: []catalog.Column{{Name: "k", Type: "BIGINT", Nullable: new(bool)}, {Name: "n", Type: "BIGINT"}, {Name: "bm", Type: "BYTES"}},
		Options: map[string]string{"table.log.arrow.compression.type": "none"},
	}, false); err != nil {
		b.Fatal(err)
	}
	writeAll(b, e, "log", recs)
	if _, err := e.CreateTable(b.Context(), catalog.TableSpec{
		Table:   "zlog",
		Columns: []catalog.Column{{Name: "k", Type: "BIGINT", Nullable: new(bool)}, {Name: "n", Type: "BIGINT"}, {Name: "bm", Type: "BYTES"}},
		Options: map[string]string{"table.log.arrow.compression.type": "zstd"},
	}, false); err != nil {
		b.Fatal(err)
	}
	writeAll(b, e, "zlog", recs)
	for _, table := range []string{"log", "zlog", "agg"} {
		name := map[string]string{"log": "log", "zlog": "log-zstd", "agg": "snapshot"}[table]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if got := readAllRows(b, e, table); got != int64(n) {
					b.Fatalf("read %d rows, want %d", got, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
