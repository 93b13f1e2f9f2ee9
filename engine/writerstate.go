package engine

import (
	"context"

	"github.com/fluxgate-io/fluxgate/errs"
)

// WriterStateRequest is the body of the writer-state action.
type WriterStateRequest struct {
	Table    string `json:"table"`
	WriterID string `json:"writer_id"`
}

// WriterState is its answer: where an idempotent writer goes on.
type WriterState struct {
	// NextSequence is one past the writer's last applied batch, 0 for a
	// writer unknown or expired (PROTOCOL.md §5.3).
	NextSequence int64 `json:"next_sequence"`
}

// WriterState tells a restarted writer how far it got, so that it skips the
// batches already applied instead of sending them again.
func (e *Engine) WriterState(_ context.Context, req WriterStateRequest) (WriterState, error) {
	if req.WriterID == "" {
		return WriterState{}, errs.New(errs.Invalid, "writer-state needs a writer_id")
	}
	t, path, err := e.resolve(req.Table)
	if err != nil {
		return WriterState{}, err
	}
	if path.View != "" {
		return WriterState{}, errs.New(errs.Invalid, "writer-state of %s: views are not written to; name the table", path.FullName())
	}
	return WriterState{NextSequence: t.log.NextSequence(req.WriterID)}, nil
}
