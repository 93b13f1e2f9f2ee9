package engine

import (
	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/framestats"
	"github.com/fluxgate-io/fluxgate/partition"
)

// prunePartitions keeps the partitions whose rows may match the scan's
// filter, judged before anything of theirs is opened: the filter sees each
// partition column as a column of one value, the partition's, and every
// other column as unknown.
func prunePartitions(info *catalog.TableInfo, vp *viewPlan, parts []*catalog.Partition) []*catalog.Partition {
	if vp.filter == nil {
		return parts
	}
	keyIdx := info.PartitionKeyIndexes()
	var kept []*catalog.Partition
	for _, p := range parts {
		stats := make([]framestats.Column, vp.view.NumFields())
		for i := range stats {
			stats[i].NullCount = -1 // unknown
		}
		for k, col := range keyIdx {
			v := vp.system + col
			if typed, ok := partition.Typed(vp.view.Field(v).Type, p.Values()[k]); ok {
				stats[v] = framestats.Column{Min: typed, Max: typed}
			}
		}
		if vp.filter.MayMatch(1, stats) {
			kept = append(kept, p)
		}
	}
	return kept
}
