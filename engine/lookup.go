package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/engine/internal/tablelookup"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Lookups are internal/tablelookup's.

// Lookuper answers the key batches of one lookup (tablelookup's: an alias,
// so that flight keeps calling its Schema and Lookup as the engine's).
type Lookuper = tablelookup.Lookuper

// OpenLookup validates a lookup against its table and returns the lookuper
// that answers its key batches.
func (e *Engine) OpenLookup(req protocol.LookupRequest) (*Lookuper, error) {
	return e.lookups.Open(req)
}

// InlineKeys turns the JSON keys of an inline lookup into a key batch of the
// table's key (or bucket-key) columns.
func (e *Engine) InlineKeys(req protocol.LookupRequest) (arrow.RecordBatch, error) {
	return e.lookups.InlineKeys(req)
}

// PlanInlineLookup checks an inline lookup and returns the schema of its
// answer and the ticket that runs it; it runs (and inserts, if asked) when
// the ticket is redeemed.
func (e *Engine) PlanInlineLookup(req protocol.LookupRequest) (*arrow.Schema, protocol.Ticket, error) {
	return e.lookups.PlanInline(req)
}

// InlineLookup redeems an inline lookup ticket: its answer as one batch.
func (e *Engine) InlineLookup(ctx context.Context, tk protocol.Ticket) (arrow.RecordBatch, protocol.LookupMeta, error) {
	return e.lookups.Inline(ctx, tk)
}

// newLookupEnv is what lookups use of the engine.
func (e *Engine) newLookupEnv() *tablelookup.Env {
	return &tablelookup.Env{
		Alloc:  e.opts.Allocator,
		KV:     e.kv,
		Tables: e.tables,
		PK:     e.pkw,
		KeysCounter: func(table string) func(int) {
			attr := tableAttr(table)
			return func(keys int) { e.met.lookupKeys.Add(context.Background(), int64(keys), attr) }
		},
	}
}
