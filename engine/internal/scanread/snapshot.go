package scanread

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"

	"github.com/fluxgate-io/fluxgate/engine/internal/statevalues"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
)

// SnapshotBatchRows bounds the rows of one batch of a snapshot read; batches
// are also cut at MaxBatchBytes.
const SnapshotBatchRows = 16 << 10

// runSnapshot sends a bucket's current rows, read from a consistent view of
// its state, as inserts, and returns the log offset the view holds the
// changelog up to: the offset a changelog read continues from. Every batch's
// start and next are that offset. In the $changelog view the rows'
// _log_offset is that offset too, and _commit_timestamp the time the view was
// taken. The filter, if any, applies to the rows.
func (rs *Stream) runSnapshot(ctx context.Context, bucket int, send func(arrow.RecordBatch, protocol.BatchMeta) error) (int64, error) {
	info, p := rs.info, rs.plan
	snap := rs.env.KV.Snapshot()
	defer snap.Close()
	at, err := snap.Applied(info.TableID, bucket)
	if err != nil {
		return 0, err
	}
	meta := protocol.BatchMeta{Bucket: bucket, Start: at, Next: at, Snapshot: true}
	taken := time.Now().UnixMilli()
	mem := rs.env.Alloc
	// Table columns decode straight into columns; the rest are skipped.
	want := make([]bool, len(rs.sch.Types))
	for _, v := range p.Need {
		if v >= p.System {
			want[v-p.System] = true
		}
	}
	cols := row.NewColumnDecoder(rs.sch.Types, want, mem)
	defer cols.Release()
	schema := p.NeedSchema()
	bytes, sent := 0, false
	flush := func() error {
		n := cols.Rows()
		decoded := cols.Columns()
		arrs := make([]arrow.Array, len(p.Need))
		for i, v := range p.Need {
			if v >= p.System {
				arrs[i] = decoded[v-p.System]
			} else {
				arrs[i] = snapshotSystemColumn(mem, p.View.Field(v), n, at, taken)
			}
		}
		need := array.NewRecordBatch(schema, arrs, int64(n))
		for _, a := range arrs {
			a.Release()
		}
		defer need.Release()
		bytes = 0
		if p.Filter != nil {
			_, filtered, err := rs.filterRows(ctx, need)
			if err != nil {
				return err
			}
			defer filtered.Release()
			need = filtered
		}
		bufRows := need.NumRows() // rows of the buffers out may be a slice of
		if rs.left >= 0 && need.NumRows() > rs.left {
			need = need.NewSlice(0, rs.left)
			defer need.Release()
		}
		if need.NumRows() == 0 && sent {
			return nil
		}
		out := rs.project(need)
		defer out.Release()
		if rs.left > 0 {
			rs.left -= out.NumRows()
		}
		sent = true
		meta.HighWatermark = rs.t.Log.HighWatermark(bucket)
		rs.env.Metrics.Read(ctx, info.Path().String(), out.NumRows(), util.TotalRecordSize(out)*out.NumRows()/max(bufRows, 1))
		return send(out, meta)
	}
	values := statevalues.Start(ctx, snap, info.TableID, bucket)
	defer values.Close()
	err = rs.decodeValues(ctx, values, func(value []byte) error {
		if err := cols.Decode(value); err != nil {
			return err
		}
		bytes += len(value)
		if cols.Rows() >= SnapshotBatchRows || bytes >= MaxBatchBytes/2 {
			return flush()
		}
		return nil
	})
	if err != nil && err != errStopScan {
		return 0, err
	}
	if cols.Rows() > 0 || !sent {
		// The last rows, or an empty batch that tells the snapshot's offset.
		if err := flush(); err != nil {
			return 0, err
		}
	}
	return at, nil
}

// decodeValues calls fn with each value of the stream until the limit is
// reached (errStopScan), fn fails or the read is cancelled.
func (rs *Stream) decodeValues(ctx context.Context, values *statevalues.Stream, fn func(value []byte) error) error {
	var c *statevalues.Chunk
	for {
		var err error
		if c, err = values.Next(c); err != nil || c == nil {
			return err
		}
		if err := rs.check(ctx); err != nil {
			return err
		}
		for i := range c.Len() {
			if rs.left == 0 {
				return errStopScan
			}
			if err := fn(c.Value(i)); err != nil {
				return err
			}
		}
	}
}

// snapshotSystemColumn is a system column of a snapshot's n rows: all of
// them inserts, at the snapshot's offset, at the time it was taken.
func snapshotSystemColumn(mem memory.Allocator, f arrow.Field, n int, at, taken int64) arrow.Array {
	b := array.NewBuilder(mem, f.Type)
	defer b.Release()
	b.Reserve(n)
	for range n {
		switch f.Name {
		case viewplan.ColChangeType:
			b.(*array.StringBuilder).Append(changeTypeNames[ChangeInsert])
		case viewplan.ColLogOffset:
			b.(*array.Int64Builder).UnsafeAppend(at)
		case viewplan.ColCommitTimestamp:
			b.(*array.TimestampBuilder).UnsafeAppend(arrow.Timestamp(taken))
		}
	}
	return b.NewArray()
}

// errStopScan ends a snapshot iteration early (the limit was reached).
var errStopScan = stopScan{}

type stopScan struct{}

func (stopScan) Error() string { return "scan stopped at its limit" }
