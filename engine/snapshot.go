package engine

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/row"
)

// snapshotBatchRows bounds the rows of one batch of a snapshot read; batches
// are also cut at MaxBatchBytes.
const snapshotBatchRows = 16 << 10

// runSnapshot sends a bucket's current rows, read from a consistent view of
// its state, as inserts, and returns the log offset the view holds the
// changelog up to: the offset a changelog read continues from. Every batch's
// start and next are that offset. In the $changelog view the rows'
// _log_offset is that offset too, and _commit_timestamp the time the view was
// taken. The filter, if any, applies to the rows.
func (rs *ReadStream) runSnapshot(ctx context.Context, bucket int, send func(arrow.RecordBatch, BatchMeta) error) (int64, error) {
	info, p := rs.info, rs.plan
	snap := rs.e.kv.Snapshot()
	defer snap.Close()
	at, err := snap.Applied(info.TableID, bucket)
	if err != nil {
		return 0, err
	}
	meta := BatchMeta{Bucket: bucket, Start: at, Next: at}
	taken := time.Now().UnixMilli()
	mem := rs.e.opts.Allocator
	b := array.NewRecordBuilder(mem, p.needSchema())
	defer b.Release()
	// Table columns decode straight into their builders; the rest are skipped.
	to := make([]array.Builder, len(rs.sch.types))
	for i, v := range p.need {
		if v >= p.system {
			to[v-p.system] = b.Field(i)
		}
	}
	rows, bytes, sent := 0, 0, false
	b.Reserve(snapshotBatchRows)
	flush := func() error {
		// The next batch is sized like this one, so that its builders
		// seldom grow (and copy) as it fills.
		var dataLens []int
		for _, f := range b.Fields() {
			if bb, ok := f.(varWidthBuilder); ok {
				dataLens = append(dataLens, bb.DataLen())
			}
		}
		defer func() {
			b.Reserve(snapshotBatchRows)
			for _, f := range b.Fields() {
				if bb, ok := f.(varWidthBuilder); ok && len(dataLens) > 0 {
					bb.ReserveData(dataLens[0])
					dataLens = dataLens[1:]
				}
			}
		}()
		need := b.NewRecordBatch()
		defer need.Release()
		rows, bytes = 0, 0
		if p.filter != nil {
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
		meta.HighWatermark = rs.t.log.HighWatermark(bucket)
		attr := tableAttr(info.Path().String())
		rs.e.met.rowsRead.Add(ctx, out.NumRows(), attr)
		rs.e.met.bytesRead.Add(ctx, RecordBytes(out)*out.NumRows()/max(bufRows, 1), attr)
		return send(out, meta)
	}
	values := streamValues(snap, info.TableID, bucket)
	err = rs.decodeValues(ctx, values, func(value []byte) error {
		if err := row.DecodeTo(value, rs.sch.types, to); err != nil {
			return err
		}
		for i, v := range p.need {
			if v >= p.system {
				continue
			}
			switch p.view.Field(v).Name {
			case ColChangeType:
				b.Field(i).(*array.StringBuilder).Append(changeTypeNames[ChangeInsert])
			case ColLogOffset:
				b.Field(i).(*array.Int64Builder).Append(at)
			case ColCommitTimestamp:
				b.Field(i).(*array.TimestampBuilder).Append(arrow.Timestamp(taken))
			}
		}
		rows++
		bytes += len(value)
		if rows >= snapshotBatchRows || bytes >= MaxBatchBytes/2 {
			return flush()
		}
		return nil
	})
	if cerr := values.close(); err == nil {
		err = cerr
	}
	if err != nil && err != errStopScan {
		return 0, err
	}
	if rows > 0 || !sent {
		// The last rows, or an empty batch that tells the snapshot's offset.
		if err := flush(); err != nil {
			return 0, err
		}
	}
	return at, nil
}

// decodeValues calls fn with each value of the stream until the limit is
// reached (errStopScan), fn fails or the read is cancelled.
func (rs *ReadStream) decodeValues(ctx context.Context, values *valueStream, fn func(value []byte) error) error {
	var c *valueChunk
	for {
		if c = values.next(c); c == nil {
			return nil
		}
		if err := rs.check(ctx); err != nil {
			return err
		}
		for i := range c.ends {
			if rs.left == 0 {
				return errStopScan
			}
			if err := fn(c.value(i)); err != nil {
				return err
			}
		}
	}
}

// varWidthBuilder is a builder of strings or binary values.
type varWidthBuilder interface {
	DataLen() int
	ReserveData(n int)
}

// errStopScan ends a snapshot iteration early (the limit was reached).
var errStopScan = stopScan{}

type stopScan struct{}

func (stopScan) Error() string { return "scan stopped at its limit" }
