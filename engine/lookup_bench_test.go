package engine

// Lookup benchmarks, each beside its baseline in the same run:
//
//	BenchmarkPointLookup/pebble    point gets of the same keys straight from the kv store's pebble
//	BenchmarkPointLookup/engine    1000-key lookup batches through the lookuper
//	BenchmarkInsertIfNotExists     new keys, 1000 a batch, into a dictionary with an auto-increment id
//	BenchmarkPrefixLookup          prefixes matching ~10 rows each

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
)

const lookupBatch = 1000

var kvSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func kvBatches(n int) []arrow.RecordBatch {
	var recs []arrow.RecordBatch
	for from := 0; from < n; from += benchBatchRows {
		b := array.NewRecordBuilder(memtest.Shared, kvSchema)
		for k := from; k < min(from+benchBatchRows, n); k++ {
			b.Field(0).(*array.Int64Builder).Append(int64(k))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("value-%d", k))
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	return recs
}

func keyBatch(keys []int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memtest.Shared, arrow.NewSchema(kvSchema.Fields()[:1], nil))
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(keys, nil)
	return b.NewRecordBatch()
}

func BenchmarkPointLookup(b *testing.B) {
	n := benchKeys()
	e := openBench(b)
	if _, err := e.CreateTable(b.Context(), catalog.TableSpec{
		Table: "kv", PrimaryKey: []string{"k"}, Options: map[string]string{"bucket.num": "4"},
		Columns: []catalog.Column{{Name: "k", Type: "BIGINT"}, {Name: "v", Type: "STRING"}},
	}, false); err != nil {
		b.Fatal(err)
	}
	writeAll(b, e, "kv", kvBatches(n))
	rng := rand.New(rand.NewPCG(1, 2))
	batches := make([][]int64, 64)
	for i := range batches {
		for range lookupBatch {
			batches[i] = append(batches[i], rng.Int64N(int64(n)))
		}
	}
	b.Run("pebble", func(b *testing.B) {
		// The same keys, already bucketed and encoded: only the gets.
		info, _ := e.DescribeTable("kv")
		kvt, err := e.tables.ByID(info.Meta.TableID)
		if err != nil {
			b.Fatal(err)
		}
		st := kvt.PK
		type loc struct {
			bucket int
			key    []byte
		}
		locs := make([][]loc, len(batches))
		for i, keys := range batches {
			rec := keyBatch(keys)
			buckets := kvt.Assigner.Assign(rec, nil)
			for j, k := range keys {
				pk, _ := row.EncodeKey(nil, st.KeyTypes, []any{k})
				locs[i] = append(locs[i], loc{int(buckets[j]), kv.RowKey(nil, info.Meta.TableID, int(buckets[j]), pk)})
			}
			rec.Release()
		}
		i := 0
		for b.Loop() {
			txn := e.kv.NewTxn()
			for _, l := range locs[i%len(locs)] {
				if _, ok, err := txn.Get(l.key); err != nil || !ok {
					b.Fatal("key not found", err)
				}
			}
			txn.Abort()
			i++
		}
		b.ReportMetric(float64(lookupBatch)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
	})
	b.Run("engine", func(b *testing.B) {
		l, err := e.OpenLookup(protocol.LookupRequest{Table: "kv"})
		if err != nil {
			b.Fatal(err)
		}
		recs := make([]arrow.RecordBatch, len(batches))
		for i, keys := range batches {
			recs[i] = keyBatch(keys)
		}
		i := 0
		for b.Loop() {
			ans, meta, err := l.Lookup(context.Background(), recs[i%len(recs)])
			if err != nil || meta.Rows != lookupBatch {
				b.Fatalf("%v, %d rows", err, meta.Rows)
			}
			ans.Release()
			i++
		}
		b.ReportMetric(float64(lookupBatch)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
	})
}

func BenchmarkInsertIfNotExists(b *testing.B) {
	e := openBench(b)
	if _, err := e.CreateTable(b.Context(), catalog.TableSpec{
		Table: "dict", PrimaryKey: []string{"k"},
		Columns: []catalog.Column{{Name: "k", Type: "BIGINT"}, {Name: "id", Type: "BIGINT"}},
		Options: map[string]string{"auto-increment.fields": "id", "bucket.num": "4"},
	}, false); err != nil {
		b.Fatal(err)
	}
	l, err := e.OpenLookup(protocol.LookupRequest{Table: "dict", InsertIfNotExists: true})
	if err != nil {
		b.Fatal(err)
	}
	next := int64(0)
	for b.Loop() {
		keys := make([]int64, lookupBatch)
		for j := range keys {
			keys[j] = next
			next++
		}
		rec := keyBatch(keys)
		ans, meta, err := l.Lookup(context.Background(), rec)
		rec.Release()
		if err != nil || meta.Rows != lookupBatch {
			b.Fatalf("%v, %d rows", err, meta.Rows)
		}
		ans.Release()
	}
	b.ReportMetric(float64(lookupBatch)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}

func BenchmarkPrefixLookup(b *testing.B) {
	const perPrefix = 10
	n := benchKeys() / perPrefix
	e := openBench(b)
	if _, err := e.CreateTable(b.Context(), catalog.TableSpec{
		Table: "orders", PrimaryKey: []string{"city", "order"},
		Columns: []catalog.Column{{Name: "city", Type: "BIGINT"}, {Name: "order", Type: "BIGINT"}, {Name: "v", Type: "STRING"}},
		Options: map[string]string{"bucket.key": "city", "bucket.num": "4"},
	}, false); err != nil {
		b.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "city", Type: arrow.PrimitiveTypes.Int64}, {Name: "order", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	var recs []arrow.RecordBatch
	rb := array.NewRecordBuilder(memtest.Allocator(b), schema)
	for c := range n {
		for o := range perPrefix {
			rb.Field(0).(*array.Int64Builder).Append(int64(c))
			rb.Field(1).(*array.Int64Builder).Append(int64(o))
			rb.Field(2).(*array.StringBuilder).Append("x")
		}
		if rb.Field(0).Len() >= benchBatchRows {
			recs = append(recs, rb.NewRecordBatch())
		}
	}
	recs = append(recs, rb.NewRecordBatch())
	rb.Release()
	writeAll(b, e, "orders", recs)
	l, err := e.OpenLookup(protocol.LookupRequest{Table: "orders", Prefix: true})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	kb := array.NewRecordBuilder(memtest.Allocator(b), arrow.NewSchema(schema.Fields()[:1], nil))
	for range 100 {
		kb.Field(0).(*array.Int64Builder).Append(rng.Int64N(int64(n)))
	}
	keys := kb.NewRecordBatch()
	kb.Release()
	for b.Loop() {
		ans, meta, err := l.Lookup(context.Background(), keys)
		if err != nil || meta.Rows != 100*perPrefix {
			b.Fatalf("%v, %d rows", err, meta.Rows)
		}
		ans.Release()
	}
	b.ReportMetric(100*float64(b.N)/b.Elapsed().Seconds(), "prefixes/s")
}
