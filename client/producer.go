package client

import (
	"context"
	"fmt"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// The producer-offsets actions of undo recovery (PROTOCOL.md §5.4).
const (
	ActionRegisterProducerOffsets = protocol.ActionRegisterProducerOffsets
	ActionGetProducerOffsets      = protocol.ActionGetProducerOffsets
	ActionDeleteProducerOffsets   = protocol.ActionDeleteProducerOffsets
)

// RegisterProducerOffsets stores a producer's starting offsets of a table
// unless some are stored already; it reports whether it stored these.
func (c *Client) RegisterProducerOffsets(ctx context.Context, producerID, table string, offsets map[int]int64) (created bool, err error) {
	var res protocol.RegisterResult
	body := protocol.ProducerOffsetsRequest{ProducerID: producerID, Table: table, Offsets: protocol.BucketKeys(offsets)}
	if err := c.Action(ctx, ActionRegisterProducerOffsets, body, &res); err != nil {
		return false, fmt.Errorf("table %s: %w", table, err)
	}
	return res.Result == protocol.RegisterCreated, nil
}

// ProducerOffsets returns the offsets registered by a producer for a table,
// nil when there are none.
func (c *Client) ProducerOffsets(ctx context.Context, producerID, table string) (map[int]int64, error) {
	var res protocol.ProducerOffsets
	body := protocol.ProducerOffsetsRequest{ProducerID: producerID, Table: table}
	if err := c.Action(ctx, ActionGetProducerOffsets, body, &res); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	return res.Offsets, nil
}

// DeleteProducerOffsets forgets the offsets registered by a producer for a
// table; forgetting none is no error.
func (c *Client) DeleteProducerOffsets(ctx context.Context, producerID, table string) error {
	if err := c.Action(ctx, ActionDeleteProducerOffsets, protocol.ProducerOffsetsRequest{ProducerID: producerID, Table: table}, nil); err != nil {
		return fmt.Errorf("table %s: %w", table, err)
	}
	return nil
}
