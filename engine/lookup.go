package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/engine/internal/tablelookup"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// OpenLookup validates a lookup against its table and returns the lookuper
// that answers its key batches.
func (e *Engine) OpenLookup(req protocol.LookupRequest) (*Lookuper, error) {
	info, path, err := e.resolveInfo(req.Table)
	if err != nil {
		return nil, err
	}
	cols, err := tablelookup.Check(info, path, req)
	if err != nil {
		return nil, err
	}
	if info.IsPartitioned() {
		return e.lookups.OpenPartitioned(info, path, req, cols), nil
	}
	if req.CreatePartitions != nil {
		return nil, errs.New(errs.Invalid, "lookup of %s: create_partitions applies to partitioned tables only", path)
	}
	t, err := e.table(info)
	if err != nil {
		return nil, err
	}
	return e.lookups.Open(t, path, req, cols), nil
}

// Lookuper answers the key batches of one lookup (tablelookup's: an alias,
// so that flight keeps calling its Schema and Lookup as the engine's).
type Lookuper = tablelookup.Lookuper

// newLookupEnv is what lookups use of the engine.
func (e *Engine) newLookupEnv() tablelookup.Env {
	return tablelookup.Env{
		Alloc: e.opts.Allocator,
		KV:    e.kv,
		KeysCounter: func(table string) func(int) {
			attr := tableAttr(table)
			return func(keys int) { e.met.lookupKeys.Add(context.Background(), int64(keys), attr) }
		},
		Insert:    e.pkw.Insert,
		Partition: e.partitionTable,
	}
}

// InlineKeys turns the JSON keys of an inline lookup into a key batch of the
// table's key (or bucket-key) columns.
func (e *Engine) InlineKeys(req protocol.LookupRequest) (arrow.RecordBatch, error) {
	info, path, err := e.resolveInfo(req.Table)
	if err != nil {
		return nil, err
	}
	return tablelookup.Keys(info, path, req, e.opts.Allocator)
}

// PlanInlineLookup checks an inline lookup and returns the schema of its
// answer and the ticket that runs it; it runs (and inserts, if asked) when
// the ticket is redeemed.
func (e *Engine) PlanInlineLookup(req protocol.LookupRequest) (*arrow.Schema, protocol.Ticket, error) {
	l, err := e.OpenLookup(req)
	if err != nil {
		return nil, protocol.Ticket{}, err
	}
	keys, err := e.InlineKeys(req)
	if err != nil {
		return nil, protocol.Ticket{}, err
	}
	keys.Release()
	info, path, _ := e.resolveInfo(req.Table)
	tk := protocol.Ticket{V: 1, TableID: info.TableID, Table: path.FullName(), View: protocol.ViewLookup, Lookup: &req}
	return l.Schema(), tk, nil
}

// InlineLookup redeems an inline lookup ticket: its answer as one batch.
func (e *Engine) InlineLookup(ctx context.Context, tk protocol.Ticket) (arrow.RecordBatch, protocol.LookupMeta, error) {
	if tk.Lookup == nil {
		return nil, protocol.LookupMeta{}, errs.New(errs.Invalid, `ticket: view lookup without "lookup"`)
	}
	if _, err := e.cat.TableByID(tk.TableID); err != nil {
		return nil, protocol.LookupMeta{}, err
	}
	if info, _, err := e.resolveInfo(tk.Lookup.Table); err != nil || info.TableID != tk.TableID {
		return nil, protocol.LookupMeta{}, errs.New(errs.NotFound, "ticket: table id %d is no longer %s", tk.TableID, errs.Quote(tk.Lookup.Table))
	}
	l, err := e.OpenLookup(*tk.Lookup)
	if err != nil {
		return nil, protocol.LookupMeta{}, err
	}
	keys, err := e.InlineKeys(*tk.Lookup)
	if err != nil {
		return nil, protocol.LookupMeta{}, err
	}
	defer keys.Release()
	return l.Lookup(ctx, keys)
}
