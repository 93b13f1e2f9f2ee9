package engine

import (
	"context"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// WriterState tells a restarted writer how far it got, so that it skips the
// batches already applied instead of sending them again.
func (e *Engine) WriterState(_ context.Context, req protocol.WriterStateRequest) (protocol.WriterState, error) {
	if req.WriterID == "" {
		return protocol.WriterState{}, errs.New(errs.InvalidArgument, "writer-state needs a writer_id")
	}
	if err := protocol.ValidateID("writer-state: writer_id", req.WriterID); err != nil {
		return protocol.WriterState{}, err
	}
	info, path, err := e.tables.Info(req.Table)
	if err != nil {
		return protocol.WriterState{}, err
	}
	if path.View != "" {
		return protocol.WriterState{}, errs.New(errs.InvalidArgument, "writer-state of %s: views are not written to; name the table", path.FullName())
	}
	if info.IsPartitioned() {
		// Each partition saw the batches with rows of it: the writer goes
		// on after the last batch any of them applied.
		var next int64
		for _, p := range e.cat.Partitions(info.TableID) {
			t, err := e.tables.Partition(p.PartitionID)
			if err != nil {
				return protocol.WriterState{}, err
			}
			next = max(next, t.Log.NextSequence(req.WriterID))
		}
		return protocol.WriterState{NextSequence: next}, nil
	}
	t, err := e.tables.Table(info)
	if err != nil {
		return protocol.WriterState{}, err
	}
	return protocol.WriterState{NextSequence: t.Log.NextSequence(req.WriterID)}, nil
}
