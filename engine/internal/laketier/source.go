package laketier

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/row"
	"github.com/fluxgate-io/fluxgate/tiering"
)

// source is a table as a tiering round reads it, in one schema: its log,
// and a primary-key table's state.
type source struct {
	kv    *kv.Store
	alloc memory.Allocator
	t     *table.Table
	sch   *table.Schema
}

func (s *source) Buckets() int { return s.t.Log.Buckets() }

func (s *source) Retained(b int) (int64, int64) {
	return s.t.Log.EarliestOffset(b), s.t.Log.HighWatermark(b)
}

func (s *source) PrimaryKey() []int { return s.sch.Info.PrimaryKeyIndexes() }

func (s *source) Read(ctx context.Context, bucket int, from, to int64, fn func(tiering.Batch) error) error {
	info := s.sch.Info
	reader, err := s.t.Log.NewReader(bucket, from, table.Indexes(len(s.sch.Types)))
	if err != nil {
		return err
	}
	defer reader.Close()
	for reader.Offset() < to {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := reader.Next(to)
		if err != nil {
			return err
		}
		if f == nil {
			return errors.New("the log ended before the high watermark")
		}
		if f.Rows == 0 {
			continue
		}
		rec, err := f.Record(s.sch.Decoder, info.ArrowSchema())
		if err != nil {
			return err
		}
		err = fn(tiering.Batch{Rec: rec, Offset: f.BaseOffset, CommitMs: f.CommitTs, ChangeTypes: f.ChangeTypes})
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// snapshotRows is how many rows of a state snapshot go in one batch.
const snapshotRows = 8192

func (s *source) Snapshot(ctx context.Context, bucket int, fn func(tiering.Batch) error) (int64, error) {
	info := s.sch.Info
	snap := s.kv.Snapshot()
	defer snap.Close()
	at, err := snap.Applied(info.TableID, bucket)
	if err != nil {
		return 0, err
	}
	b := array.NewRecordBuilder(s.alloc, info.ArrowSchema())
	defer b.Release()
	flush := func() error {
		rec := b.NewRecordBatch()
		defer rec.Release()
		return fn(tiering.Batch{Rec: rec, Offset: -1, CommitMs: -1})
	}
	rows := 0
	err = snap.Rows(info.TableID, bucket, func(_, value []byte) error {
		if err := row.DecodeTo(value, s.sch.Types, b.Fields()); err != nil {
			return err
		}
		if rows++; rows%snapshotRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			return flush()
		}
		return nil
	})
	if err == nil && rows%snapshotRows != 0 {
		err = flush()
	}
	return at, err
}
