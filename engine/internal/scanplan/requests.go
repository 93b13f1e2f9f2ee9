package scanplan

import (
	"maps"
	"slices"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// checkOffsetBuckets refuses startup or stop offsets naming a bucket the
// table does not have, as "buckets" does: a typo must not read from the
// earliest offset instead.
func checkOffsetBuckets(req protocol.ScanRequest, table string, buckets int) error {
	for i, offs := range []map[int]int64{req.Startup.Offsets, req.Stop.Offsets} {
		what := [...]string{"startup", "stop"}[i]
		for _, b := range slices.Sorted(maps.Keys(offs)) {
			if b >= buckets {
				return errs.New(errs.InvalidArgument, "%s offsets: bucket %d does not exist: %s has buckets 0 to %d", what, b, table, buckets-1)
			}
		}
	}
	return nil
}
