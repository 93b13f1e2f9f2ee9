package merge_test

import (
	"bytes"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/row"
)

// FuzzBitmapUnion feeds arbitrary bytes to rbm32 and rbm64: a union either
// succeeds with a bitmap that decodes, or fails as INVALID_ARGUMENT or
// FAILED_PRECONDITION; it never panics or exhausts memory.
func FuzzBitmapUnion(f *testing.F) {
	b32, _ := roaring.BitmapOf(1, 2, 70000).ToBytes()
	r32 := roaring.New()
	r32.AddRange(10, 5000)
	r32.RunOptimize()
	run32, _ := r32.ToBytes()
	b64, _ := roaring64.BitmapOf(1, 1<<40).ToBytes()
	f.Add(b32, run32, b64, b64)
	f.Add([]byte{}, b32, []byte{1}, b64)
	f.Add(run32[:len(run32)-1], b32, b64[:9], b64)
	m := newMerger(f, cols("k", "INT", "r", "BYTES", "r64", "BYTES"), []string{"k"},
		map[string]string{"table.merge-engine": "aggregation", "fields.r.agg": "rbm32", "fields.r64.agg": "rbm64"})
	f.Fuzz(func(t *testing.T, acc32, in32, acc64, in64 []byte) {
		w := newWrite(t, m, nil, false)
		for _, old := range []row.Row{{int32(1), acc32, acc64}, nil} {
			stored, _, err := w.Upsert(old, row.Row{int32(1), in32, in64}, nil)
			if err != nil {
				if k := errs.KindOf(err); k != errs.InvalidArgument && k != errs.FailedPrecondition {
					t.Fatalf("error of kind %s: %v", k, err)
				}
				continue
			}
			var x roaring.Bitmap
			if _, err := x.ReadFrom(bytes.NewReader(stored[1].([]byte))); err != nil {
				t.Fatalf("rbm32 result does not decode: %v", err)
			}
			var y roaring64.Bitmap
			if err := y.UnmarshalBinary(stored[2].([]byte)); err != nil {
				t.Fatalf("rbm64 result does not decode: %v", err)
			}
		}
	})
}
