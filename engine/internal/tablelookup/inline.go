package tablelookup

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// An inline lookup (PROTOCOL.md's lookup action) carries its keys as JSON:
// planned into a ticket, it runs when the ticket is redeemed.

// InlineKeys turns the JSON keys of an inline lookup into a key batch of the
// table's key (or bucket-key) columns.
func (env *Env) InlineKeys(req protocol.LookupRequest) (arrow.RecordBatch, error) {
	info, path, err := env.Tables.Info(req.Table)
	if err != nil {
		return nil, err
	}
	return Keys(info, path, req, env.Alloc)
}

// PlanInline checks an inline lookup and returns the schema of its answer
// and the ticket that runs it; it runs (and inserts, if asked) when the
// ticket is redeemed.
func (env *Env) PlanInline(req protocol.LookupRequest) (*arrow.Schema, protocol.Ticket, error) {
	l, err := env.Open(req)
	if err != nil {
		return nil, protocol.Ticket{}, err
	}
	keys, err := env.InlineKeys(req)
	if err != nil {
		return nil, protocol.Ticket{}, err
	}
	keys.Release()
	info, path, _ := env.Tables.Info(req.Table)
	tk := protocol.Ticket{V: 1, TableID: info.TableID, Table: path.FullName(), View: protocol.ViewLookup, Lookup: &req}
	return l.Schema(), tk, nil
}

// Inline redeems an inline lookup ticket: its answer as one batch.
func (env *Env) Inline(ctx context.Context, tk protocol.Ticket) (arrow.RecordBatch, protocol.LookupMeta, error) {
	if tk.Lookup == nil {
		return nil, protocol.LookupMeta{}, errs.New(errs.InvalidArgument, `ticket: view lookup without "lookup"`)
	}
	if _, err := env.Tables.Catalog().TableByID(tk.TableID); err != nil {
		return nil, protocol.LookupMeta{}, err
	}
	if info, _, err := env.Tables.Info(tk.Lookup.Table); err != nil || info.TableID != tk.TableID {
		return nil, protocol.LookupMeta{}, errs.New(errs.NotFound, "ticket: table id %d is no longer %s", tk.TableID, errs.Quote(tk.Lookup.Table))
	}
	l, err := env.Open(*tk.Lookup)
	if err != nil {
		return nil, protocol.LookupMeta{}, err
	}
	keys, err := env.InlineKeys(*tk.Lookup)
	if err != nil {
		return nil, protocol.LookupMeta{}, err
	}
	defer keys.Release()
	return l.Lookup(ctx, keys)
}
