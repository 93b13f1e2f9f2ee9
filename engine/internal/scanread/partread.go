package scanread

import "github.com/fluxgate-io/fluxgate/protocol"

// Reading a ticket of a partitioned table: each range names its partition,
// whose own table the range is read from, and every batch's app_metadata
// names it too.

// usePartition makes the stream read the table of r's partition, when the
// ticket's ranges span partitions (a limited scan).
func (rs *Stream) usePartition(r protocol.TicketRange) error {
	if r.PartitionID == 0 || r.PartitionID == rs.info.TableID {
		return nil
	}
	if r.PartitionID < 0 {
		return rs.useLakeOnly(r)
	}
	t, err := rs.env.rangeTable(rs.tk.TableID, r.PartitionID, r.Partition)
	if err != nil {
		return err
	}
	rs.t, rs.sch, rs.info, rs.lakeOnly = t, t.Current(), t.Current().Info, nil
	return nil
}

// partitionOf returns the partition id and name of the range being read.
func (rs *Stream) partitionOf() (int64, string) {
	if lo := rs.lakeOnly; lo != nil {
		return lo.PartitionID, lo.Partition
	}
	if p := rs.info.Partition(); p != nil {
		return p.PartitionID, p.PartitionName
	}
	return 0, ""
}

// tagPartition wraps send (of decoded or encoded batches) to name in each
// batch's meta the partition being read, when the table is partitioned.
// (A function, as Go methods take no type parameters.)
func tagPartition[B any](rs *Stream, send func(B, protocol.BatchMeta) error) func(B, protocol.BatchMeta) error {
	if rs.tk.PartitionID == 0 {
		return send
	}
	return func(b B, m protocol.BatchMeta) error {
		m.PartitionID, m.Partition = rs.partitionOf()
		return send(b, m)
	}
}
