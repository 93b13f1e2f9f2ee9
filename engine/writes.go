package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/engine/internal/logwrite"
	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// The write path is internal/logwrite's; its types are the engine's API as
// they are (aliases, not wrappers: each method would only forward).
type (
	// WriteStream applies the batches of one write stream to one table, in
	// order. It is not safe for concurrent use.
	WriteStream = logwrite.Stream
	// WriteResult is what one batch did (PROTOCOL.md §5 PutResult).
	WriteResult = logwrite.Result
	// PendingWrite is a submitted batch that is perhaps not durable yet.
	PendingWrite = logwrite.Pending
	// Received is a batch as a writer sent it, compressed.
	Received = logwrite.Received
)

// NewReceived keeps a batch of schema that arrived compressed (its IPC
// metadata and body) as received. It returns nil when no column of it can
// be stored so (see logstore.NewReceived).
func NewReceived(schema *arrow.Schema, meta *ipcmsg.RecordBatch, body []byte) *Received {
	return logwrite.NewReceived(schema, meta, body)
}

// OpenWrite validates a write request against its table and returns the
// stream that applies its batches.
func (e *Engine) OpenWrite(req protocol.WriteRequest) (*WriteStream, error) {
	return e.logw.Open(req)
}

// Undo brings a primary-key table back to the state it had at the given
// per-bucket offsets (pkwrite's Undo: Fluss's undo recovery).
func (e *Engine) Undo(ctx context.Context, req protocol.UndoRequest) (protocol.UndoResult, error) {
	return e.pkw.Undo(ctx, req)
}
