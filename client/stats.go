package client

import (
	"context"
	"fmt"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// ActionTableStats is the table-stats action (PROTOCOL.md §3).
const ActionTableStats = protocol.ActionTableStats

// TableStats returns a table's rows, in all and per bucket, without reading
// them: a primary-key table's current rows, a log table's retained ones. Of
// a partitioned table it answers per partition, those named (none: all). A
// view, a WAL-image primary-key table and a lake-enabled log table have no
// such count (FAILED_PRECONDITION).
func (c *Client) TableStats(ctx context.Context, table string, partitions ...string) (protocol.TableStats, error) {
	var res protocol.TableStats
	if err := c.Action(ctx, ActionTableStats, protocol.TableStatsRequest{Table: table, Partitions: partitions}, &res); err != nil {
		return res, fmt.Errorf("table %s: %w", table, err)
	}
	return res, nil
}
