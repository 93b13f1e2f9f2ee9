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
		return protocol.WriterState{}, errs.New(errs.Invalid, "writer-state needs a writer_id")
	}
	t, path, err := e.resolve(req.Table)
	if err != nil {
		return protocol.WriterState{}, err
	}
	if path.View != "" {
		return protocol.WriterState{}, errs.New(errs.Invalid, "writer-state of %s: views are not written to; name the table", path.FullName())
	}
	return protocol.WriterState{NextSequence: t.log.NextSequence(req.WriterID)}, nil
}
