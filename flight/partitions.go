package flight

// The partition actions of partitioned tables (PROTOCOL.md "Partitioned
// tables"): creating and dropping a partition needs write on its table (as
// Fluss's CreatePartition and DropPartition), listing needs read.

import (
	"context"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/protocol"
)

func (s *Service) createPartition(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.CreatePartitionRequest](body, protocol.ActionCreatePartition)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionCreatePartition, acl.Write, req.Table); err != nil {
		return nil, err
	}
	return s.eng.CreatePartition(ctx, req.Table, req.Partition, req.IfNotExists)
}

func (s *Service) dropPartition(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.DropPartitionRequest](body, protocol.ActionDropPartition)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionDropPartition, acl.Write, req.Table); err != nil {
		return nil, err
	}
	return protocol.Empty{}, s.eng.DropPartition(ctx, req.Table, req.Partition, req.IfExists)
}

func (s *Service) listPartitions(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.ListPartitionsRequest](body, protocol.ActionListPartitions)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionListPartitions, acl.Read, req.Table); err != nil {
		return nil, err
	}
	parts, err := s.eng.ListPartitions(req.Table, req.Partition)
	if err != nil {
		return nil, err
	}
	p, err := pageOf(parts, func(p protocol.PartitionInfo) string { return p.PartitionName }, req.PageRequest, protocol.ActionListPartitions)
	return listing{"partitions", p}, err
}
