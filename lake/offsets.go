package lake

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Snapshot is a committed lake snapshot: what it holds of each bucket.
type Snapshot struct {
	ID int64
	// Offsets maps each tiered bucket to the first offset not in the lake;
	// nil on a partitioned table.
	Offsets map[int]int64
	// Partitions holds a partitioned table's offsets by partition id: of
	// the partitions fluxgate has, not of those dropped since (whose rows
	// stay in the lake); nil on a table without partitions.
	Partitions  map[int64]PartitionOffsets
	CommittedAt int64 // unix ms
}

// PropPartitionOffsets is the snapshot summary key of a partitioned table's
// offsets, which it has instead of PropOffsets: a JSON object of partition
// id to {"name": partition name, "buckets": {bucket: offset}}.
const PropPartitionOffsets = "fluxgate.partition-offsets"

// snapshotOf reads the offsets out of a snapshot's summary.
func snapshotOf(s *table.Snapshot) (*Snapshot, error) {
	if s == nil {
		return nil, nil
	}
	out := &Snapshot{ID: s.SnapshotID, CommittedAt: s.TimestampMs}
	var props iceberg.Properties
	if s.Summary != nil {
		props = s.Summary.Properties
	}
	switch {
	case props[PropPartitionOffsets] != "":
		if err := json.Unmarshal([]byte(props[PropPartitionOffsets]), &out.Partitions); err != nil {
			return nil, fmt.Errorf("lake snapshot %d: %s: %w", s.SnapshotID, PropPartitionOffsets, err)
		}
	case props[PropOffsets] != "":
		var raw map[string]int64
		if err := json.Unmarshal([]byte(props[PropOffsets]), &raw); err != nil {
			return nil, fmt.Errorf("lake snapshot %d: %s: %w", s.SnapshotID, PropOffsets, err)
		}
		out.Offsets = map[int]int64{}
		for k, v := range raw {
			b, err := strconv.Atoi(k)
			if err != nil {
				return nil, fmt.Errorf("lake snapshot %d: %s: bucket %q", s.SnapshotID, PropOffsets, k)
			}
			out.Offsets[b] = v
		}
	default:
		return nil, fmt.Errorf("lake snapshot %d has no %s in its summary: it was not committed by fluxgate", s.SnapshotID, PropOffsets)
	}
	return out, nil
}

// offsetProps are the summary properties of a snapshot holding offsets:
// prev's (nil for the first snapshot) moved on by c.
func offsetProps(prev *Snapshot, c Commit, partitioned bool) iceberg.Properties {
	if !partitioned {
		offsets := map[string]int64{}
		if prev != nil {
			for b, o := range prev.Offsets {
				offsets[strconv.Itoa(b)] = o
			}
		}
		for b, o := range c.Offsets {
			offsets[strconv.Itoa(b)] = o
		}
		js, _ := json.Marshal(offsets)
		return iceberg.Properties{PropOffsets: string(js)}
	}
	parts := map[int64]PartitionOffsets{}
	if prev != nil {
		for id, p := range prev.Partitions {
			parts[id] = PartitionOffsets{Name: p.Name, Buckets: maps.Clone(p.Buckets)}
		}
	}
	for _, id := range c.Forget {
		delete(parts, id)
	}
	for id, p := range c.Partitions {
		merged := parts[id]
		merged.Name = p.Name
		if merged.Buckets == nil {
			merged.Buckets = map[int]int64{}
		}
		maps.Copy(merged.Buckets, p.Buckets)
		parts[id] = merged
	}
	js, _ := json.Marshal(parts)
	return iceberg.Properties{PropPartitionOffsets: string(js)}
}

// keptOffsets are the offset properties of snap's summary, for a snapshot
// (a compaction's) that changes no offsets.
func keptOffsets(snap *table.Snapshot) iceberg.Properties {
	out := iceberg.Properties{}
	for _, k := range []string{PropOffsets, PropPartitionOffsets} {
		if v := snap.Summary.Properties[k]; v != "" {
			out[k] = v
		}
	}
	return out
}
