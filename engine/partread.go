package engine

import (
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
)

// A ticket of a partitioned table names each range's partition, whose own
// table the range is read from (scanread's partread.go).

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
		return nil, errs.New(errs.NotFound, "ticket: partition %s (id %d) of table id %d does not exist (dropped, or dropped and re-created under a new id)", errs.Quote(name), partitionID, id)
	}
	if p.PartitionName != name {
		return nil, errs.New(errs.Invalid, "ticket: partition id %d is partition %s, not %s", partitionID, p.PartitionName, errs.Quote(name))
	}
	return e.openPartition(partitionID)
}
