package row

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Take returns the rows idx of rec, using Arrow's take kernel: a batch split
// by bucket or by partition.
func Take(ctx context.Context, rec arrow.RecordBatch, idx []int32, mem memory.Allocator) (arrow.RecordBatch, error) {
	ib := array.NewInt32Builder(mem)
	ib.AppendValues(idx, nil)
	indices := ib.NewArray()
	ib.Release()
	defer indices.Release()
	ctx = compute.WithAllocator(ctx, mem)
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range cols {
		c, err := compute.TakeArray(ctx, rec.Column(i), indices)
		if err != nil {
			return nil, fmt.Errorf("split batch by bucket: %w", err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(len(idx))), nil
}
