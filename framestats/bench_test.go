package framestats

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// BenchmarkMinMaxLowCardinality: string statistics of a column of a few
// distinct values, most of them equal to the least or the greatest.
func BenchmarkMinMaxLowCardinality(b *testing.B) {
	vals := []string{"USD", "EUR", "GBP", "JPY", "android", "ios", "windows", "macos", "linux", "chrome", "safari", "https://example.com/a"}
	bld := array.NewStringBuilder(memtest.Allocator(b))
	x := uint32(1)
	for range 64 << 10 {
		x = x*1664525 + 1013904223
		bld.Append(vals[(x>>16)%uint32(len(vals))])
	}
	arr := bld.NewStringArray()
	b.SetBytes(int64(arr.Len()))
	for b.Loop() {
		minMaxString(arr.ValueOffsets(), arr.ValueBytes(), nil, 0)
	}
}
