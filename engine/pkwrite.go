package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/logstore"
)

// submitPK applies one batch to a primary-key table through the
// primary-key write pipeline (internal/pkwrite).
func (w *WriteStream) submitPK(ctx context.Context, rec arrow.RecordBatch, seq int64) (*PendingWrite, error) {
	writer := logstore.Writer{}
	if w.req.WriterID != "" {
		writer = logstore.Writer{ID: w.req.WriterID, Seq: seq, Sparse: w.info.Partition() != nil}
	}
	staged, err := w.pk.Submit(w.e.pkw, w.t, w.sch, rec, writer)
	if err != nil {
		return nil, err
	}
	res := WriteResult{Sequence: seq, Rows: rec.NumRows(), Buckets: map[int]int64{}}
	if staged == nil { // no rows
		return &PendingWrite{res: res}, nil
	}
	w.e.met.rowsWritten.Add(ctx, rec.NumRows(), tableAttr(w.info.Path().String()))
	return &PendingWrite{res: res, pk: staged}, nil
}
