package protocol

import "fmt"

// The status detail (google.rpc.ErrorInfo) of a DoGet stream the server
// ended because its client took nothing for the idle timeout (PROTOCOL.md §1,
// Limits): the status is RESOURCE_EXHAUSTED and the client opens the read
// again where it stopped, with ResumeTicket.
const (
	ErrorDomain      = "fluxgate.io"
	ReasonStreamIdle = "STREAM_IDLE"
)

// ResumeTicket is the ticket that reads what t has left after a stream of t
// delivered its batches up to last (nil: none) and rows rows in all: the
// same read from last.Next on (PROTOCOL.md §4.3, "Resuming a read"). more is
// false when nothing is left. A snapshot's batches (last.Snapshot) have no
// offset to resume at, and a lake part cannot resume inside a ticket with
// further ranges: those are an error, which the reader surfaces.
func ResumeTicket(t Ticket, last *BatchMeta, rows int64) (resumed Ticket, more bool, err error) {
	if last == nil {
		return t, true, nil // nothing delivered: the same read
	}
	if t.View == ViewLookup {
		return t, false, fmt.Errorf("an inline lookup cannot resume: look the keys up again")
	}
	if last.Snapshot {
		return t, false, fmt.Errorf("a snapshot cannot resume at an offset: read it again")
	}
	if t.Limit != nil {
		left := *t.Limit - rows
		if left <= 0 {
			return t, false, nil
		}
		t.Limit = &left
	}
	ranges := append([]TicketRange{{PartitionID: t.PartitionID, Partition: t.Partition, Bucket: t.Bucket, Start: t.Start, Stop: t.Stop}}, t.Then...)
	i := 0
	for i < len(ranges) && (ranges[i].PartitionID != last.PartitionID || ranges[i].Bucket != last.Bucket) {
		i++
	}
	if i == len(ranges) {
		return t, false, fmt.Errorf("batch of bucket %d (partition %q) is not of the ticket's ranges", last.Bucket, last.Partition)
	}
	cur, rest := ranges[i], ranges[i+1:]
	inLake := t.View == ViewLake || (t.View == ViewUnion && last.Next < cur.Start)
	switch {
	case inLake:
		// lake_start takes a single range.
		if len(rest) > 0 {
			return t, false, fmt.Errorf("a lake read of several buckets (a limit) cannot resume: read it again")
		}
		t.LakeStart = &last.Next
	case cur.Stop == nil || last.Next < *cur.Stop:
		// The rest of this range without its snapshot or lake part, which
		// were sent, and the ranges after it with theirs: one ticket cannot
		// say both.
		if (t.Snapshot || t.View == ViewUnion) && len(rest) > 0 {
			return t, false, fmt.Errorf("a read of several buckets (a limit) cannot resume past a snapshot or lake part: read it again")
		}
		cur.Start = last.Next
		t.Snapshot = false
		if t.View == ViewUnion {
			t.View, t.LakeSnapshotID, t.LakeStart = ViewLog, nil, nil
		}
	case len(rest) == 0:
		return t, false, nil
	default: // this range is done: the next one, whole
		cur, rest = rest[0], rest[1:]
	}
	t.PartitionID, t.Partition, t.Bucket, t.Start, t.Stop = cur.PartitionID, cur.Partition, cur.Bucket, cur.Start, cur.Stop
	t.Then = rest
	return t, true, nil
}
