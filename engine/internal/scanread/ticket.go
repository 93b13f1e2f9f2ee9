package scanread

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A ticket's rules, all of them: its form (ParseTicket), then, against the
// tables it names, its view and ranges (Open). Planning makes tickets that
// keep them (scanplan), but a ticket comes back from the client, so each is
// checked again when it is redeemed.

// ParseTicket decodes a ticket strictly.
func ParseTicket(b []byte) (protocol.Ticket, error) {
	var tk protocol.Ticket
	if err := protocol.DecodeJSON(b, "ticket", &tk); err != nil {
		return tk, err
	}
	if tk.V != 1 {
		return tk, errs.New(errs.InvalidArgument, "ticket version %d: this server reads version 1", tk.V)
	}
	for _, r := range ticketRanges(tk) {
		if r.Start < 0 || (r.Stop != nil && *r.Stop < r.Start) {
			return tk, errs.New(errs.InvalidArgument, "ticket range of bucket %d is malformed (start %d, stop %s)", r.Bucket, r.Start, stopString(r))
		}
	}
	if err := CheckCompression(tk.Compression); err != nil {
		return tk, fmt.Errorf("ticket: %w", err)
	}
	if tk.Limit != nil && *tk.Limit < 0 {
		return tk, errs.New(errs.InvalidArgument, "ticket limit %d is negative", *tk.Limit)
	}
	return tk, nil
}

// CheckCompression accepts "" (batches as stored: see
// Stream.SendEncoded) and the values of protocol.Compressions: of a ticket,
// and of the scan that plans it.
func CheckCompression(c string) error {
	if c == "" || slices.Contains(protocol.Compressions, c) {
		return nil
	}
	return errs.New(errs.InvalidArgument, "compression %.64q: want one of %s", c, strings.Join(protocol.Compressions, ", "))
}

// Open checks a parsed ticket against the tables it names and returns the
// stream that reads it.
func (env *Env) Open(tk protocol.Ticket) (*Stream, error) {
	t, err := env.rangeTable(tk.TableID, tk.PartitionID, tk.Partition)
	if err != nil {
		return nil, err
	}
	for _, r := range tk.Then {
		if _, err := env.rangeTable(tk.TableID, r.PartitionID, r.Partition); err != nil {
			return nil, err
		}
	}
	var sch *table.Schema
	var info *catalog.TableInfo
	if t != nil {
		sch, info = t.Current(), t.Current().Info
	} else if info, err = env.Tables.Catalog().TableByID(tk.TableID); err != nil { // a lake-only partition's
		return nil, err
	}
	if err := checkView(tk, info); err != nil {
		return nil, err
	}
	for _, r := range ticketRanges(tk) {
		if r.Bucket < 0 || r.Bucket >= info.BucketCount() {
			return nil, errs.New(errs.InvalidArgument, "ticket: bucket %d does not exist in %s", r.Bucket, info.Path())
		}
	}
	plan, err := viewplan.Resolve(info, tk.View, tk.Columns, tk.Filter)
	if err != nil {
		return nil, err
	}
	return newStream(env, t, sch, info, tk, ticketRanges(tk), plan), nil
}

// checkView checks a ticket's view against its table, info, and the
// ticket's lake part against its view.
func checkView(tk protocol.Ticket, info *catalog.TableInfo) error {
	if tk.LakeStart != nil && tk.View != protocol.ViewLake && tk.View != protocol.ViewUnion {
		return errs.New(errs.InvalidArgument, "ticket: lake_start on view %s; only lake and union tickets have a lake part", tk.View)
	}
	switch tk.View {
	case protocol.ViewLog:
		if info.IsPrimaryKey() {
			return errs.New(errs.InvalidArgument, "ticket: view log of primary-key table %s; read view changelog", info.Path())
		}
	case protocol.ViewChangelog:
	case protocol.ViewSnapshot:
		if !info.IsPrimaryKey() {
			return errs.New(errs.InvalidArgument, "ticket: view snapshot of log table %s; read view log", info.Path())
		}
	case protocol.ViewLake, protocol.ViewUnion:
		if tk.LakeSnapshotID == nil {
			return errs.New(errs.InvalidArgument, "ticket: view %s needs a lake_snapshot_id", tk.View)
		}
		if tk.View == protocol.ViewUnion && info.IsPrimaryKey() {
			return errs.New(errs.InvalidArgument, "ticket: view union of primary-key table %s; read view snapshot", info.Path())
		}
		if tk.Snapshot {
			return errs.New(errs.InvalidArgument, "ticket: view %s does not start with a state snapshot", tk.View)
		}
		if tk.LakeStart != nil && (*tk.LakeStart < 0 || len(tk.Then) > 0) {
			return errs.New(errs.InvalidArgument, "ticket: lake_start %d needs a single range and an offset of at least 0", *tk.LakeStart)
		}
	default:
		return errs.New(errs.InvalidArgument, "ticket: unknown view %s", errs.Quote(tk.View))
	}
	return nil
}

// rangeTable returns the table a ticket's range reads: the table with id,
// or, on a partitioned table, its partition partitionID (named name); nil
// for a partition only in the lake (a negative id), read from the lake
// alone. A partition that no longer exists is errs.NotFound naming it.
func (env *Env) rangeTable(id, partitionID int64, name string) (*table.Table, error) {
	if partitionID < 0 {
		return nil, env.checkLakeOnly(id, name)
	}
	cat := env.Tables.Catalog()
	if partitionID == 0 {
		if info, err := cat.TableByID(id); err == nil && info.IsPartitioned() {
			return nil, errs.New(errs.InvalidArgument, "ticket: table %s is partitioned; each range needs its partition_id and partition", info.Table)
		}
		return env.Tables.ByID(id)
	}
	p, err := cat.PartitionByID(partitionID)
	if err != nil || p.TableID != id {
		return nil, errs.New(errs.NotFound, "ticket: partition %s (id %d) of table id %d does not exist (dropped, or dropped and re-created under a new id)", errs.Quote(name), partitionID, id)
	}
	if p.PartitionName != name {
		return nil, errs.New(errs.InvalidArgument, "ticket: partition id %d is partition %s, not %s", partitionID, p.PartitionName, errs.Quote(name))
	}
	return env.Tables.Partition(partitionID)
}

// checkLakeOnly checks a ticket range of a partition only in the lake: of a
// partitioned table, by a name fluxgate no longer has.
func (env *Env) checkLakeOnly(tableID int64, name string) error {
	info, err := env.Tables.Catalog().TableByID(tableID)
	if err != nil {
		return err
	}
	if !info.IsPartitioned() {
		return errs.New(errs.InvalidArgument, "ticket: table %s is not partitioned; a negative partition_id names a partition only in the lake", info.Table)
	}
	if _, err := partition.Values(info.PartitionKeys, name); err != nil {
		return err
	}
	return nil
}

// ticketRanges is a ticket's ranges: its own, then those of Then.
func ticketRanges(tk protocol.Ticket) []protocol.TicketRange {
	first := protocol.TicketRange{PartitionID: tk.PartitionID, Partition: tk.Partition, Bucket: tk.Bucket, Start: tk.Start, Stop: tk.Stop}
	return append([]protocol.TicketRange{first}, tk.Then...)
}

// stopString prints a range's stop, "null" when unbounded.
func stopString(r protocol.TicketRange) string {
	if r.Stop == nil {
		return "null"
	}
	return strconv.FormatInt(*r.Stop, 10)
}
