package lake

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/row"
)

// BenchmarkKeyIndexRebuild rebuilds the key index of a primary-key lake of 1M keys
// (BIGINT id, one bucket) from its files, as after a restart, and
// reports the index's heap per key and the rebuild's time:
//
//	go test ./lake/ -run '^$' -bench KeyIndexRebuild -benchtime 3x
func BenchmarkKeyIndexRebuild(b *testing.B) {
	const keys = 1_000_000
	ctx := context.Background()
	lt := keyIndexLake(b, keys)
	tbl := lt.current()

	// The heap the index holds: what is live after the rebuilds (the last
	// index) less what was before them.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var idx *keyIndex
	var err error
	for b.Loop() {
		idx = nil
		start := time.Now()
		if idx, err = loadKeyIndex(ctx, tbl, lt.m.keyIDs); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/rebuild")
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if idx.len() != keys {
		b.Fatalf("the index holds %d keys, want %d", idx.len(), keys)
	}
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/keys, "bytes/key")
	runtime.KeepAlive(idx)
}

// keyIndexLake commits keys rows to a new primary-key lake table in one
// bucket, and returns the table as a restarted server opens it: without its
// key index.
func keyIndexLake(b *testing.B, keys int) *Table {
	ctx := context.Background()
	mem := memtest.Allocator(b)
	info := tableInfo(b, catalog.TableSpec{Table: "fluss.users",
		Columns:    []catalog.Column{col("id", "BIGINT", false), col("name", "STRING", true), col("small", "SMALLINT", true)},
		PrimaryKey: []string{"id"}, Options: map[string]string{"bucket.num": "1"}}, 7)
	warehouse := b.TempDir()
	_, lt := openLake(b, warehouse, info)
	rb := array.NewRecordBuilder(mem, info.ArrowSchema())
	offs, ts := make([]int64, keys), make([]int64, keys)
	for i := range keys {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.StringBuilder).Append("name")
		rb.Field(2).(*array.Int16Builder).Append(int16(i))
		offs[i], ts[i] = int64(i), 1_700_000_000_000
	}
	rec := rb.NewRecordBatch()
	rb.Release()
	data, err := lt.DataRecord(ctx, mem, rec, 0, offs, ts)
	rec.Release()
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := lt.Commit(ctx, Commit{
		Data:    func(yield func(arrow.RecordBatch, error) bool) { yield(data, nil) },
		Offsets: map[int]int64{0: int64(keys)},
	}); err != nil {
		b.Fatal(err)
	}
	data.Release()
	_, lt = openLake(b, warehouse, info)
	return lt
}

// BenchmarkKeyLocs puts 1M BIGINT keys, encoded as the key index encodes
// them, into the index's key map, and for a baseline into a map of
// allocated strings to 16-byte locations (the index's layout before), and
// reports each one's heap per key:
//
//	go test ./lake/ -run '^$' -bench KeyLocs -benchtime 3x
func BenchmarkKeyLocs(b *testing.B) {
	const keys = 1_000_000
	encoded := make([][]byte, keys)
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64}
	for i := range encoded {
		k, err := row.EncodeKey(nil, types, []any{int64(i)})
		if err != nil {
			b.Fatal(err)
		}
		encoded[i] = k
	}
	heapPerKey := func(b *testing.B, build func() any) {
		var before, after runtime.MemStats
		var built any
		for b.Loop() {
			built = nil
			runtime.GC()
			runtime.ReadMemStats(&before)
			built = build()
			runtime.GC()
			runtime.ReadMemStats(&after)
		}
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/keys, "bytes/key")
		runtime.KeepAlive(built)
	}
	b.Run("keyLocs", func(b *testing.B) {
		heapPerKey(b, func() any {
			k := newKeyLocs(0)
			for i, key := range encoded {
				k.add(key, rowLoc{0, uint32(i)})
			}
			return k
		})
	})
	b.Run("baseline=map", func(b *testing.B) {
		type loc struct {
			file int32
			pos  int64
		}
		heapPerKey(b, func() any {
			m := map[string]loc{}
			for i, key := range encoded {
				m[string(key)] = loc{0, int64(i)}
			}
			return m
		})
	})
}
