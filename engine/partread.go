package engine

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Reading a ticket of a partitioned table: each range names its partition,
// whose own table the range is read from, and every batch's app_metadata
// names it too.

// ticketTable returns the table a ticket's range reads: the table with id,
// or, on a partitioned table, its partition partitionID. A partition that no
// longer exists is errs.NotFound naming it.
func (e *Engine) ticketTable(id, partitionID int64, name string) (*table.Table, error) {
	if partitionID < 0 {
		return nil, e.checkLakeOnly(id, name) // no table: read from the lake alone
	}
	if partitionID == 0 {
		if info, err := e.cat.TableByID(id); err == nil && info.IsPartitioned() {
			return nil, errs.New(errs.Invalid, "ticket: table %s is partitioned; each range needs its partition_id and partition", info.Table)
		}
		return e.tableByID(id)
	}
	p, err := e.cat.PartitionByID(partitionID)
	if err != nil || p.TableID != id {
		return nil, errs.New(errs.NotFound, "ticket: partition %s (id %d) of table id %d does not exist (dropped, or dropped and re-created under a new id)", protocol.Quote(name), partitionID, id)
	}
	if p.PartitionName != name {
		return nil, errs.New(errs.Invalid, "ticket: partition id %d is partition %s, not %s", partitionID, p.PartitionName, protocol.Quote(name))
	}
	return e.openPartition(partitionID)
}

// usePartition makes the stream read the table of r's partition, when the
// ticket's ranges span partitions (a limited scan).
func (rs *ReadStream) usePartition(r protocol.TicketRange) error {
	if r.PartitionID == 0 || r.PartitionID == rs.info.TableID {
		return nil
	}
	if r.PartitionID < 0 {
		return rs.useLakeOnly(r)
	}
	t, err := rs.e.ticketTable(rs.tk.TableID, r.PartitionID, r.Partition)
	if err != nil {
		return err
	}
	rs.t, rs.sch, rs.info, rs.lakeOnly = t, t.Current(), t.Current().Info, nil
	return nil
}

// partitionOf returns the partition id and name of the range being read.
func (rs *ReadStream) partitionOf() (int64, string) {
	if lo := rs.lakeOnly; lo != nil {
		return lo.PartitionID, lo.Partition
	}
	if p := rs.info.Partition(); p != nil {
		return p.PartitionID, p.PartitionName
	}
	return 0, ""
}

func (rs *ReadStream) tagPartition(send func(arrow.RecordBatch, protocol.BatchMeta) error) func(arrow.RecordBatch, protocol.BatchMeta) error {
	if rs.tk.PartitionID == 0 {
		return send
	}
	return func(rec arrow.RecordBatch, m protocol.BatchMeta) error {
		m.PartitionID, m.Partition = rs.partitionOf()
		return send(rec, m)
	}
}

func (rs *ReadStream) tagEncodedPartition(send func(logstore.Message, protocol.BatchMeta) error) func(logstore.Message, protocol.BatchMeta) error {
	if rs.tk.PartitionID == 0 {
		return send
	}
	return func(msg logstore.Message, m protocol.BatchMeta) error {
		m.PartitionID, m.Partition = rs.partitionOf()
		return send(msg, m)
	}
}
