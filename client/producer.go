package client

import (
	"context"
	"fmt"
	"strconv"
)

// The producer-offsets actions of undo recovery (PROTOCOL.md §5.4).
const (
	ActionRegisterProducerOffsets = "register-producer-offsets"
	ActionGetProducerOffsets      = "get-producer-offsets"
	ActionDeleteProducerOffsets   = "delete-producer-offsets"
)

type producerBody struct {
	ProducerID string        `json:"producer_id"`
	Table      string        `json:"table"`
	Offsets    map[int]int64 `json:"offsets,omitempty"`
}

// RegisterProducerOffsets stores a producer's starting offsets of a table
// unless some are stored already; it reports whether it stored these.
func (c *Client) RegisterProducerOffsets(ctx context.Context, producerID, table string, offsets map[int]int64) (created bool, err error) {
	var res struct {
		Result string `json:"result"`
	}
	if err := c.Action(ctx, ActionRegisterProducerOffsets, producerBody{producerID, table, offsets}, &res); err != nil {
		return false, fmt.Errorf("table %s: %w", table, err)
	}
	return res.Result == "created", nil
}

// ProducerOffsets returns the offsets registered by a producer for a table,
// nil when there are none.
func (c *Client) ProducerOffsets(ctx context.Context, producerID, table string) (map[int]int64, error) {
	var res struct {
		Offsets map[string]int64 `json:"offsets"`
	}
	if err := c.Action(ctx, ActionGetProducerOffsets, producerBody{ProducerID: producerID, Table: table}, &res); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	if res.Offsets == nil {
		return nil, nil
	}
	out := make(map[int]int64, len(res.Offsets))
	for k, v := range res.Offsets {
		b, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("table %s: producer offsets: bucket %q: %w", table, k, err)
		}
		out[b] = v
	}
	return out, nil
}

// DeleteProducerOffsets forgets the offsets registered by a producer for a
// table; forgetting none is no error.
func (c *Client) DeleteProducerOffsets(ctx context.Context, producerID, table string) error {
	if err := c.Action(ctx, ActionDeleteProducerOffsets, producerBody{ProducerID: producerID, Table: table}, nil); err != nil {
		return fmt.Errorf("table %s: %w", table, err)
	}
	return nil
}
