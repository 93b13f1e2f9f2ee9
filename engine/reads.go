package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/engine/internal/scanplan"
	"github.com/fluxgate-io/fluxgate/engine/internal/scanread"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Reads: a scan planned into tickets (internal/scanplan), a ticket redeemed
// (internal/scanread); the types flight handles are theirs, as aliases.

// MaxBatchBytes bounds the batches a scan sends (scanread's).
const MaxBatchBytes = scanread.MaxBatchBytes

// Change types as stored in changelog frames (Fluss's byte values).
const (
	ChangeAppend       = scanread.ChangeAppend
	ChangeInsert       = scanread.ChangeInsert
	ChangeUpdateBefore = scanread.ChangeUpdateBefore
	ChangeUpdateAfter  = scanread.ChangeUpdateAfter
	ChangeDelete       = scanread.ChangeDelete
)

// TicketStream is an opened ticket; scanread reads it. An alias: flight calls
// its Schema, Compression, SendEncoded, HoldMemory and Run, which need no
// engine.
type TicketStream = scanread.Stream

// ReadMemory is a budget a TicketStream holds the log frames it reads against
// (TicketStream.HoldMemory).
type ReadMemory = scanread.Memory

// EncodedBatch is a batch as the store holds it (TicketStream.SendEncoded).
type EncodedBatch = scanread.EncodedBatch

// ParseTicket decodes a ticket strictly (scanread's ticket rules).
func ParseTicket(b []byte) (protocol.Ticket, error) { return scanread.ParseTicket(b) }

// OpenRead checks a ticket against the table it names.
func (e *Engine) OpenRead(tk protocol.Ticket) (*TicketStream, error) {
	return e.reads.Open(tk)
}

// readEnv is what scans use of the engine.
func (e *Engine) readEnv() *scanread.Env {
	return &scanread.Env{
		Alloc:         e.opts.Allocator,
		KV:            e.kv,
		IdleHeartbeat: e.opts.FollowHeartbeat,
		Metrics: scanread.Metrics{Scans: e.met.scans, Read: func(ctx context.Context, table string, rows, bytes int64) {
			attr := tableAttr(table)
			e.met.rowsRead.Add(ctx, rows, attr)
			e.met.bytesRead.Add(ctx, bytes, attr)
		}},
		Draining: e.draining,
		Tables:   e.tables,
		Lakes:    e.lakes,
	}
}

// PlanScan validates a scan and fixes its offsets into tickets.
func (e *Engine) PlanScan(ctx context.Context, req protocol.ScanRequest) (*ScanPlan, error) {
	return e.plan.Scan(ctx, req)
}

// ScanSchema returns the result schema of a scan without planning offsets or
// touching data.
func (e *Engine) ScanSchema(req protocol.ScanRequest) (*arrow.Schema, error) {
	return e.plan.Schema(req)
}

// ScanPlan is a planned scan: the result schema and one ticket per endpoint.
// An alias: the plan is scanplan's data, handed to flight as it is.
type ScanPlan = scanplan.Plan
