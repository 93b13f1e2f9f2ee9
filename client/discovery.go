package client

import (
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// discover follows the partitions of a partitioned table that an unbounded
// scan of all of them did not plan: every interval it lists the partitions
// and reads each new one from its earliest offset, as Fluss's sources do.
func (s *Scanner) discover(c *Client, req ScanRequest, interval time.Duration) {
	known := map[string]bool{}
	for _, p := range s.plan.Meta.Partitions {
		known[p.PartitionName] = true
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-tick.C:
			}
			parts, err := c.ListPartitions(s.ctx, req.Table, nil)
			if err != nil {
				s.fail(err)
				return
			}
			var fresh []string
			for _, p := range parts {
				if !known[p.PartitionName] {
					fresh = append(fresh, p.PartitionName)
				}
			}
			if len(fresh) == 0 {
				continue
			}
			next := req
			next.Partitions, next.Startup = fresh, Earliest
			plan, err := c.Plan(s.ctx, next)
			if err != nil {
				// A new partition dropped before it was planned is
				// listed no more at the next look.
				if isNotFound(err) {
					continue
				}
				s.fail(err)
				return
			}
			for _, name := range fresh {
				known[name] = true
			}
			for _, ep := range plan.Endpoints {
				s.startEndpoint(c, ep)
			}
		}
	}()
}

// isNotFound reports whether err carries the gRPC status NOT_FOUND.
func isNotFound(err error) bool {
	var st interface{ GRPCStatus() *status.Status }
	return errors.As(err, &st) && st.GRPCStatus().Code() == codes.NotFound
}
