package pkwrite

import (
	"fmt"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/kv"
)

// A primary-key table's row count per bucket (engine's stats.go serves it)
// is kept by the writes and the replay here: each counts the keys it adds
// and removes, in the kv batch that changes the bucket's rows.

// countOldBuckets counts the rows of the table's buckets that have no count
// yet (a table from before counts were kept); Replay runs it first, with no
// write under way.
func (env *Env) countOldBuckets(store *kv.Store, info *catalog.TableInfo) error {
	counted, err := store.CountBuckets(info.TableID, info.BucketCount())
	if err != nil {
		return fmt.Errorf("count the rows of %s: %w", info.Path(), err)
	}
	var rows int64
	for _, n := range counted {
		rows += n
	}
	if rows > 0 { // a new table's empty buckets are not worth a line
		env.Logger.Info("counted the rows of primary-key buckets that kept no count", "table", info.Path().String(), "buckets", len(counted), "rows", rows)
	}
	return nil
}

// rowsDelta is how a key going from present (or not) to present (or not)
// changes its bucket's row count.
func rowsDelta(before, after bool) int64 {
	switch {
	case after && !before:
		return 1
	case before && !after:
		return -1
	}
	return 0
}
