package flight

import (
	"context"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// tableStats answers table-stats. A row count tells of the rows, so it
// needs read, as a scan does.
func (s *Service) tableStats(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.TableStatsRequest](body, protocol.ActionTableStats)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionTableStats, acl.Read, req.Table); err != nil {
		return nil, err
	}
	return s.eng.TableStats(ctx, req)
}
