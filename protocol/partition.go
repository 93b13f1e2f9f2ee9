package protocol

import (
	"maps"
	"slices"
)

// Partitioned tables (PROTOCOL.md "Partitioned tables"): the partition
// actions and the partition-offsets form that replaces a per-bucket offsets
// map on a partitioned table.

// PartitionSpec is a partition as a request gives it: partition key → value,
// every key of the table, values as strings.
type PartitionSpec map[string]string

// PartitionInfo is a partition as the server describes it.
type PartitionInfo struct {
	PartitionID   int64         `json:"partition_id"`
	PartitionName string        `json:"partition_name"` // the values joined by "$" in key order
	Spec          PartitionSpec `json:"spec"`
}

// CreatePartitionRequest is the body of create-partition; its answer is the
// PartitionInfo.
type CreatePartitionRequest struct {
	Table       string        `json:"table"`
	Partition   PartitionSpec `json:"partition"`
	IfNotExists bool          `json:"if_not_exists,omitempty"`
}

// DropPartitionRequest is the body of drop-partition.
type DropPartitionRequest struct {
	Table     string        `json:"table"`
	Partition PartitionSpec `json:"partition"`
	IfExists  bool          `json:"if_exists,omitempty"`
}

// ListPartitionsRequest is the body of list-partitions; a partial spec lists
// only the partitions that match it.
type ListPartitionsRequest struct {
	Table     string        `json:"table"`
	Partition PartitionSpec `json:"partition,omitempty"`
	PageRequest
}

// ListPartitionsResult is one page of list-partitions, in name order.
type ListPartitionsResult struct {
	Partitions    []PartitionInfo `json:"partitions"`
	NextPageToken string          `json:"next_page_token,omitempty"`
}

// PartitionOffsets is partition name → bucket → offset: the offsets of a
// partitioned table wherever a non-partitioned one has a bucket → offset map.
type PartitionOffsets map[string]map[int]int64

// Clone returns a deep copy of o.
func (o PartitionOffsets) Clone() PartitionOffsets {
	if o == nil {
		return nil
	}
	out := make(PartitionOffsets, len(o))
	for name, offs := range o {
		out[name] = maps.Clone(offs)
	}
	return out
}

// Names returns the partitions named, sorted.
func (o PartitionOffsets) Names() []string {
	return slices.Sorted(maps.Keys(o))
}

// RawPartitionOffsets is partition name → bucket (as sent) → offset: the
// form of a request the server validates with DecodePartitionOffsets.
type RawPartitionOffsets map[string]map[string]int64

// DecodePartitionOffsets checks every partition's buckets as BucketOffsets
// does; what prefixes the errors.
func DecodePartitionOffsets(in RawPartitionOffsets, what string) (PartitionOffsets, error) {
	if in == nil {
		return nil, nil
	}
	out := make(PartitionOffsets, len(in))
	for name, offs := range in {
		b, err := BucketOffsets(offs, what+" of partition "+name)
		if err != nil {
			return nil, err
		}
		out[name] = b
	}
	return out, nil
}

// RawPartitionKeys spells o's buckets as the JSON keys of a request.
func RawPartitionKeys(o PartitionOffsets) RawPartitionOffsets {
	if o == nil {
		return nil
	}
	out := make(RawPartitionOffsets, len(o))
	for name, offs := range o {
		out[name] = BucketKeys(offs)
	}
	return out
}
