package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// Partitioned tables (PROTOCOL.md "Partitioned tables").

// The partition actions.
const (
	ActionCreatePartition = protocol.ActionCreatePartition
	ActionDropPartition   = protocol.ActionDropPartition
	ActionListPartitions  = protocol.ActionListPartitions
)

// Partition shapes: a partition as the server describes it, a spec (partition
// key → value) and per-partition offsets (partition name → bucket → offset).
type (
	PartitionInfo    = protocol.PartitionInfo
	PartitionSpec    = protocol.PartitionSpec
	PartitionOffsets = protocol.PartitionOffsets
)

// AtPartitionOffsets is a per-partition, per-bucket offset of a partitioned
// table; for a startup, partitions and buckets not named start at the
// earliest offset, for a stop they end at the latest.
func AtPartitionOffsets(offsets PartitionOffsets) Position {
	return protocol.AtPartitionOffsets(offsets)
}

// CreatePartition creates a partition of a partitioned table; with
// ifNotExists an existing one is returned instead of ALREADY_EXISTS.
func (c *Client) CreatePartition(ctx context.Context, table string, spec PartitionSpec, ifNotExists bool) (*PartitionInfo, error) {
	body := protocol.CreatePartitionRequest{Table: table, Partition: spec, IfNotExists: ifNotExists}
	var info PartitionInfo
	if err := c.Action(ctx, ActionCreatePartition, body, &info); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	return &info, nil
}

// DropPartition drops a partition and its data; with ifExists a missing one
// is no error.
func (c *Client) DropPartition(ctx context.Context, table string, spec PartitionSpec, ifExists bool) error {
	body := protocol.DropPartitionRequest{Table: table, Partition: spec, IfExists: ifExists}
	if err := c.Action(ctx, ActionDropPartition, body, nil); err != nil {
		return fmt.Errorf("table %s: %w", table, err)
	}
	return nil
}

// ListPartitions lists a partitioned table's partitions in name order, those
// matching a partial spec (nil: all), following every page.
func (c *Client) ListPartitions(ctx context.Context, table string, partial PartitionSpec) ([]PartitionInfo, error) {
	body := map[string]any{"table": table}
	if len(partial) > 0 {
		body["partition"] = partial
	}
	var out []PartitionInfo
	err := c.ListPages(ctx, ActionListPartitions, body, "partitions", func(item json.RawMessage) error {
		var p PartitionInfo
		if err := json.Unmarshal(item, &p); err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	return out, nil
}

// ListPartitionOffsets is ListOffsets of a partitioned table: per partition
// (nil partitions: all), per bucket (nil buckets: all).
func (c *Client) ListPartitionOffsets(ctx context.Context, table string, at Position, partitions []string, buckets []int) (PartitionOffsets, error) {
	if at.IsZero() {
		at = Latest
	}
	atJSON, err := json.Marshal(at)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	body := protocol.OffsetsRequest{Table: table, At: atJSON, Partitions: partitions, Buckets: buckets}
	var res protocol.OffsetsResult
	if err := c.Action(ctx, ActionListOffsets, body, &res); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	return res.PartitionOffsets, nil
}

// UndoPartitions is Undo of a partitioned primary-key table: the partitions
// named go back to their state at the offsets.
func (c *Client) UndoPartitions(ctx context.Context, table string, offsets PartitionOffsets) (*UndoResult, error) {
	body := protocol.UndoRequest{Table: table, PartitionOffsets: protocol.RawPartitionKeys(offsets)}
	var res UndoResult
	if err := c.Action(ctx, ActionUndo, body, &res); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	return &res, nil
}

// RegisterProducerPartitionOffsets is RegisterProducerOffsets of a
// partitioned table.
func (c *Client) RegisterProducerPartitionOffsets(ctx context.Context, producerID, table string, offsets PartitionOffsets) (created bool, err error) {
	var res protocol.RegisterResult
	body := protocol.ProducerOffsetsRequest{ProducerID: producerID, Table: table, PartitionOffsets: protocol.RawPartitionKeys(offsets)}
	if err := c.Action(ctx, ActionRegisterProducerOffsets, body, &res); err != nil {
		return false, fmt.Errorf("table %s: %w", table, err)
	}
	return res.Result == protocol.RegisterCreated, nil
}

// ProducerPartitionOffsets is ProducerOffsets of a partitioned table.
func (c *Client) ProducerPartitionOffsets(ctx context.Context, producerID, table string) (PartitionOffsets, error) {
	var res protocol.ProducerOffsets
	body := protocol.ProducerOffsetsRequest{ProducerID: producerID, Table: table}
	if err := c.Action(ctx, ActionGetProducerOffsets, body, &res); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	return res.PartitionOffsets, nil
}
