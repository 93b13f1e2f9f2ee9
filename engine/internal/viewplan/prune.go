package viewplan

import (
	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/framestats"
	"github.com/fluxgate-io/fluxgate/partition"
)

// Prune keeps the partitions whose rows may match the scan's
// filter, judged before anything of theirs is opened: the filter sees each
// partition column as a column of the values whose partition value is the
// partition's (partition.Bounds: one value, or a TIME's millisecond), and
// every other column as unknown.
func (p *Plan) Prune(info *catalog.TableInfo, parts []*catalog.Partition) []*catalog.Partition {
	if p.Filter == nil {
		return parts
	}
	var kept []*catalog.Partition
	for _, part := range parts {
		if p.MayMatchPartition(info, part.Values()) {
			kept = append(kept, part)
		}
	}
	return kept
}

// MayMatchPartition reports whether the scan's filter may match rows of the
// partition of values (in partition-key order).
func (p *Plan) MayMatchPartition(info *catalog.TableInfo, values []string) bool {
	if p.Filter == nil {
		return true
	}
	stats := make([]framestats.Column, p.View.NumFields())
	for i := range stats {
		stats[i].NullCount = -1 // unknown
	}
	for k, col := range info.PartitionKeyIndexes() {
		v := p.System + col
		if lo, hi, ok := partition.Bounds(p.View.Field(v).Type, values[k]); ok {
			stats[v] = framestats.Column{Min: lo, Max: hi}
		}
	}
	return p.Filter.MayMatch(1, stats)
}
