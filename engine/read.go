package engine

import (
	"context"
	"fmt"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/scanplan"
	"github.com/fluxgate-io/fluxgate/engine/internal/scanread"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

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

// ReadStream is an opened ticket; scanread reads it. An alias: flight calls
// its Schema, Compression, SendEncoded, HoldMemory and Run, which need no
// engine.
type ReadStream = scanread.Stream

// ReadMemory is a budget a ReadStream holds the log frames it reads against
// (ReadStream.HoldMemory).
type ReadMemory = scanread.Memory

// EncodedBatch is a batch as the store holds it (ReadStream.SendEncoded).
type EncodedBatch = scanread.EncodedBatch

// ParseTicket decodes a ticket strictly.
func ParseTicket(b []byte) (protocol.Ticket, error) {
	var tk protocol.Ticket
	if err := protocol.DecodeJSON(b, "ticket", &tk); err != nil {
		return tk, err
	}
	if tk.V != 1 {
		return tk, errs.New(errs.Invalid, "ticket version %d: this server reads version 1", tk.V)
	}
	for _, r := range ticketRanges(tk) {
		if r.Start < 0 || (r.Stop != nil && *r.Stop < r.Start) {
			return tk, errs.New(errs.Invalid, "ticket range of bucket %d is malformed (start %d, stop %s)", r.Bucket, r.Start, stopString(r))
		}
	}
	if err := scanplan.CheckCompression(tk.Compression); err != nil {
		return tk, fmt.Errorf("ticket: %w", err)
	}
	if tk.Limit != nil && *tk.Limit < 0 {
		return tk, errs.New(errs.Invalid, "ticket limit %d is negative", *tk.Limit)
	}
	return tk, nil
}

// OpenRead checks a ticket against the table it names.
func (e *Engine) OpenRead(tk protocol.Ticket) (*ReadStream, error) {
	t, err := e.ticketTable(tk.TableID, tk.PartitionID, tk.Partition)
	if err != nil {
		return nil, err
	}
	for _, r := range tk.Then {
		if _, err := e.ticketTable(tk.TableID, r.PartitionID, r.Partition); err != nil {
			return nil, err
		}
	}
	var sch *table.Schema
	var info *catalog.TableInfo
	if t != nil {
		sch, info = t.Current(), t.Current().Info
	} else if info, err = e.cat.TableByID(tk.TableID); err != nil { // a lake-only partition's
		return nil, err
	}
	if tk.LakeStart != nil && tk.View != protocol.ViewLake && tk.View != protocol.ViewUnion {
		return nil, errs.New(errs.Invalid, "ticket: lake_start on view %s; only lake and union tickets have a lake part", tk.View)
	}
	switch tk.View {
	case protocol.ViewLog:
		if info.IsPrimaryKey() {
			return nil, errs.New(errs.Invalid, "ticket: view log of primary-key table %s; read view changelog", info.Path())
		}
	case protocol.ViewChangelog:
	case protocol.ViewSnapshot:
		if !info.IsPrimaryKey() {
			return nil, errs.New(errs.Invalid, "ticket: view snapshot of log table %s; read view log", info.Path())
		}
	case protocol.ViewLake, protocol.ViewUnion:
		if tk.LakeSnapshotID == nil {
			return nil, errs.New(errs.Invalid, "ticket: view %s needs a lake_snapshot_id", tk.View)
		}
		if tk.View == protocol.ViewUnion && info.IsPrimaryKey() {
			return nil, errs.New(errs.Invalid, "ticket: view union of primary-key table %s; read view snapshot", info.Path())
		}
		if tk.Snapshot {
			return nil, errs.New(errs.Invalid, "ticket: view %s does not start with a state snapshot", tk.View)
		}
		if tk.LakeStart != nil && (*tk.LakeStart < 0 || len(tk.Then) > 0) {
			return nil, errs.New(errs.Invalid, "ticket: lake_start %d needs a single range and an offset of at least 0", *tk.LakeStart)
		}
	default:
		return nil, errs.New(errs.Invalid, "ticket: unknown view %s", errs.Quote(tk.View))
	}
	for _, r := range ticketRanges(tk) {
		if r.Bucket < 0 || r.Bucket >= info.BucketCount() {
			return nil, errs.New(errs.Invalid, "ticket: bucket %d does not exist in %s", r.Bucket, info.Path())
		}
	}
	plan, err := viewplan.Resolve(info, tk.View, tk.Columns, tk.Filter)
	if err != nil {
		return nil, err
	}
	return scanread.New(e.reads, t, sch, info, tk, ticketRanges(tk), plan), nil
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
		Draining:    e.draining,
		Ready:       e.Ready,
		TicketTable: e.ticketTable,
		TableByID:   e.cat.TableByID,
		LakeTable: func(ctx context.Context, t *table.Table) (*lake.Table, error) {
			return e.lakes.TableLake(ctx, t, t.Current().Info)
		},
		PartitionedLake: func(ctx context.Context, info *catalog.TableInfo) (*lake.Table, error) {
			return e.lakes.Open(ctx, e.lakes.Partitioned(info.TableID).Tier, info)
		},
	}
}
