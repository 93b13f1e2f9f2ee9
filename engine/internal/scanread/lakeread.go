package scanread

import (
	"context"
	"io"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/util"

	"github.com/fluxgate-io/fluxgate/internal/prefetch"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// runLake sends a bucket's rows of the ticket's lake snapshot, in offset
// order: the whole of a $lake ticket, the first part of a union ticket.
// Each batch's next is the offset after its last row. Rows below the
// ticket's lake_start, if it has one, were read before and are skipped.
func (rs *Stream) runLake(ctx context.Context, bucket int, send func(arrow.RecordBatch, protocol.BatchMeta) error) error {
	if rs.left == 0 {
		return nil
	}
	lt, err := rs.readLake(ctx)
	if err != nil {
		return err
	}
	// The scan returns the need columns, then __offset if need lacks it.
	names := rs.plan.NeedNames()
	offsetAt := slices.Index(names, lake.ColOffset)
	if offsetAt < 0 {
		names = append(names, lake.ColOffset)
		offsetAt = len(names) - 1
	}
	part, ok, err := rs.lakePartition(ctx, lt)
	if err != nil || !ok {
		return err // !ok: the lake has nothing of the partition
	}
	recs, err := lt.Scan(ctx, rs.env.Alloc, *rs.tk.LakeSnapshotID, part, bucket, names, rs.plan.Filter)
	if err != nil {
		return err
	}
	// Decoding the next Parquet pages overlaps sending the last batch.
	cfg := prefetch.Config[arrow.RecordBatch]{Ahead: lakeBatchesAhead, Release: arrow.RecordBatch.Release}
	batches := prefetch.Start(ctx, cfg, func(ctx context.Context, emit func(prefetch.Work[arrow.RecordBatch]) bool) error {
		for rec, err := range recs {
			if err != nil {
				return err
			}
			if !emit(func() (arrow.RecordBatch, error) { return rec, nil }) {
				rec.Release()
				return nil
			}
		}
		return nil
	})
	defer batches.Close()
	start := int64(-1)
	for {
		rec, err := batches.Next()
		if err == io.EOF {
			return nil
		}
		if err == nil {
			err = rs.check(ctx)
		}
		if err == nil && rs.tk.LakeStart != nil {
			rec = skipBelow(rec, offsetAt, *rs.tk.LakeStart)
		}
		if err == nil {
			err = rs.sendLake(ctx, rec, bucket, offsetAt, &start, send)
		}
		if rec != nil {
			rec.Release()
		}
		if err != nil || rs.left == 0 {
			return err
		}
	}
}

// lakeBatchesAhead is how many lake batches may be decoded ahead of the one
// sent.
const lakeBatchesAhead = 2

// sendLake filters one record of lake rows and sends what is left. *start
// is where the next batch starts: the first row's offset at first, then the
// previous batch's next.
func (rs *Stream) sendLake(ctx context.Context, rec arrow.RecordBatch, bucket, offsetAt int, start *int64, send func(arrow.RecordBatch, protocol.BatchMeta) error) error {
	if rec.NumRows() == 0 {
		return nil
	}
	offs := rec.Column(offsetAt).(*array.Int64)
	if *start < 0 {
		*start = offs.Value(0)
	}
	end := offs.Value(int(rec.NumRows())-1) + 1
	sub := rec
	offset := func(k int64) int64 { return offs.Value(int(k)) }
	if rs.plan.Filter != nil {
		kept, filtered, err := rs.filterRows(ctx, rec)
		if err != nil {
			return err
		}
		defer filtered.Release()
		sub = filtered
		offset = func(k int64) int64 { return offs.Value(int(kept[k])) }
	}
	rows := sub.NumRows()
	if rs.left >= 0 && rows > rs.left {
		rows = rs.left
		end = offset(rows-1) + 1
	}
	if rows == 0 {
		return nil
	}
	out := rs.project(sub)
	defer out.Release()
	meta := protocol.BatchMeta{Bucket: bucket, Start: *start, Next: end, HighWatermark: rs.highWatermark(bucket, end)}
	*start = end
	return rs.sendRows(ctx, out, rows, meta, offset, util.TotalRecordSize(out)*rows/max(out.NumRows(), 1), send)
}

// skipBelow returns the rows of rec (whose column offsetAt holds ascending
// offsets) at or after offset from, releasing rec if it returns a slice.
func skipBelow(rec arrow.RecordBatch, offsetAt int, from int64) arrow.RecordBatch {
	offs := rec.Column(offsetAt).(*array.Int64)
	n := int(rec.NumRows())
	first := sort.Search(n, func(i int) bool { return offs.Value(i) >= from })
	if first == 0 {
		return rec
	}
	sub := rec.NewSlice(int64(first), int64(n))
	rec.Release()
	return sub
}
