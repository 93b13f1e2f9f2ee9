package merge_test

import (
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/fluxgate-io/fluxgate/row"
)

// BenchmarkAggregateUpsert is the merge half of an aggregation write of
// (k BIGINT, n BIGINT sum, r BYTES rbm32), driven as the kv store drives it:
// a fresh input row per record, each carrying a one-id bitmap (a count
// distinct over dense auto-increment ids).
//
//   - insert: every record is a new key (the first write stores the row, after
//     validating the bitmap);
//   - update: records cycle over 4096 keys, so each key's bitmap grows by one
//     id per write and every write is a union.
func BenchmarkAggregateUpsert(b *testing.B) {
	m := newMerger(b, cols("k", "BIGINT", "n", "BIGINT", "r", "BYTES"), []string{"k"},
		map[string]string{"table.merge-engine": "aggregation", "fields.n.agg": "sum", "fields.r.agg": "rbm32"})
	inputs := make([][]byte, 1<<16)
	for i := range inputs {
		inputs[i], _ = roaring.BitmapOf(uint32(i)).ToBytes()
	}
	b.Run("insert", func(b *testing.B) {
		w := newWrite(b, m, nil, false)
		b.ReportAllocs()
		for i := range b.N {
			in := row.Row{int64(i), int64(1), inputs[i%len(inputs)]}
			if _, changes, err := w.Upsert(nil, in, nil); err != nil || len(changes) != 1 {
				b.Fatal(err)
			}
		}
	})
	b.Run("update", func(b *testing.B) {
		w := newWrite(b, m, nil, false)
		const keys = 4096
		stored := make([]row.Row, keys)
		b.ReportAllocs()
		for i := range b.N {
			k := i % keys
			in := row.Row{int64(k), int64(1), inputs[i%len(inputs)]}
			s, changes, err := w.Upsert(stored[k], in, nil)
			if err != nil || len(changes) == 0 {
				b.Fatal(err)
			}
			stored[k] = s
		}
	})
}

// BenchmarkAggregateUpsertSum is the update path without the bitmap column.
func BenchmarkAggregateUpsertSum(b *testing.B) {
	m := newMerger(b, cols("k", "BIGINT", "n", "BIGINT"), []string{"k"},
		map[string]string{"table.merge-engine": "aggregation", "fields.n.agg": "sum"})
	w := newWrite(b, m, nil, false)
	const keys = 4096
	stored := make([]row.Row, keys)
	b.ReportAllocs()
	for i := range b.N {
		k := i % keys
		in := row.Row{int64(k), int64(1000)}
		s, _, err := w.Upsert(stored[k], in, nil)
		if err != nil {
			b.Fatal(err)
		}
		stored[k] = s
	}
}
