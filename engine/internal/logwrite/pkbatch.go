package logwrite

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/logstore"
)

// submitPK applies one batch to a primary-key table through the
// primary-key write pipeline (internal/pkwrite).
func (w *Stream) submitPK(ctx context.Context, rec arrow.RecordBatch, seq int64) (*Pending, error) {
	writer := logstore.Writer{}
	if w.req.WriterID != "" {
		writer = logstore.Writer{ID: w.req.WriterID, Seq: seq, Sparse: w.info.Partition() != nil}
	}
	staged, err := w.pk.Submit(w.env.PK, w.t, w.sch, rec, writer)
	if err != nil {
		return nil, err
	}
	res := Result{Sequence: seq, Rows: rec.NumRows(), Buckets: map[int]int64{}}
	if staged == nil { // no rows
		return &Pending{res: res}, nil
	}
	w.env.Metrics.Rows.Add(ctx, rec.NumRows(), w.env.Metrics.Table(w.info.Path().String()))
	return &Pending{res: res, pk: staged}, nil
}
