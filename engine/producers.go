package engine

import (
	"context"
	"fmt"
	"maps"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/producer"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// RegisterProducerOffsets stores per-bucket offsets of a table under a
// producer id unless some are stored already (create-if-absent).
func (e *Engine) RegisterProducerOffsets(ctx context.Context, req protocol.ProducerOffsetsRequest) (protocol.RegisterResult, error) {
	info, err := e.producerTable(req, "register-producer-offsets")
	if err != nil {
		return protocol.RegisterResult{}, err
	}
	stored := producer.Offsets{TableID: info.TableID}
	if info.IsPartitioned() {
		stored.Partitions, err = e.producerPartitionOffsets(info, req)
	} else {
		stored.Buckets, err = producerBucketOffsets(req, req.Offsets, info.BucketCount())
	}
	if err != nil {
		return protocol.RegisterResult{}, err
	}
	created, err := e.producers.Register(req.ProducerID, req.Table, stored)
	if err != nil {
		return protocol.RegisterResult{}, err
	}
	if created {
		return protocol.RegisterResult{Result: protocol.RegisterCreated}, nil
	}
	return protocol.RegisterResult{Result: protocol.RegisterAlreadyExists}, nil
}

// GetProducerOffsets returns the offsets registered under a producer id: no
// offsets when none are registered (a first start, not an error).
func (e *Engine) GetProducerOffsets(ctx context.Context, req protocol.ProducerOffsetsRequest) (protocol.ProducerOffsets, error) {
	info, err := e.producerTable(req, "get-producer-offsets")
	if err != nil {
		return protocol.ProducerOffsets{}, err
	}
	offs, ok := e.producers.Get(req.ProducerID, req.Table, info.TableID)
	if !ok {
		return protocol.ProducerOffsets{}, nil
	}
	// Copies: the store's maps are its own.
	return protocol.ProducerOffsets{Offsets: maps.Clone(offs.Buckets), PartitionOffsets: protocol.PartitionOffsets(offs.Partitions).Clone()}, nil
}

// producerBucketOffsets checks the bucket offsets of a registration.
func producerBucketOffsets(req protocol.ProducerOffsetsRequest, raw map[string]int64, buckets int) (map[int]int64, error) {
	offsets, err := protocol.BucketOffsets(raw, "register-producer-offsets offsets")
	if err != nil {
		return nil, err
	}
	if len(offsets) == 0 {
		return nil, errs.New(errs.InvalidArgument, "register-producer-offsets of %s: no offsets", req.Table)
	}
	for b := range offsets {
		if b >= buckets {
			return nil, errs.New(errs.InvalidArgument, "register-producer-offsets of %s: bucket %d does not exist (%d buckets)", req.Table, b, buckets)
		}
	}
	return offsets, nil
}

// producerPartitionOffsets checks the partition offsets of a partitioned
// table's registration: of partitions that exist, of their buckets.
func (e *Engine) producerPartitionOffsets(info *catalog.TableInfo, req protocol.ProducerOffsetsRequest) (map[string]map[int]int64, error) {
	// An empty map is allowed: a partitioned table may have no partition
	// yet when a producer starts.
	if req.Offsets != nil || req.PartitionOffsets == nil {
		return nil, errs.New(errs.InvalidArgument, `register-producer-offsets of %s: the table is partitioned: give "partition_offsets"`, req.Table)
	}
	out := make(map[string]map[int]int64, len(req.PartitionOffsets))
	for name, raw := range req.PartitionOffsets {
		if _, err := e.cat.PartitionByName(info, name); err != nil {
			return nil, err
		}
		offs, err := producerBucketOffsets(req, raw, info.BucketCount())
		if err != nil {
			return nil, err
		}
		out[name] = offs
	}
	return out, nil
}

// DeleteProducerOffsets removes the offsets registered under a producer id;
// removing none is no error.
func (e *Engine) DeleteProducerOffsets(ctx context.Context, req protocol.ProducerOffsetsRequest) error {
	if _, err := e.producerTable(req, "delete-producer-offsets"); err != nil {
		return err
	}
	return e.producers.Delete(req.ProducerID, req.Table)
}

// producerTable checks a request's producer id and returns its table's
// definition.
func (e *Engine) producerTable(req protocol.ProducerOffsetsRequest, action string) (*catalog.TableInfo, error) {
	if err := protocol.ValidateID("producer_id", req.ProducerID); err != nil {
		return nil, fmt.Errorf("%s: %w", action, err)
	}
	info, path, err := e.tables.Info(req.Table)
	if err != nil {
		return nil, err
	}
	if path.View != "" {
		return nil, errs.New(errs.InvalidArgument, "%s: %s is a view, not a table", action, path.FullName())
	}
	if !info.IsPartitioned() {
		if req.PartitionOffsets != nil {
			return nil, errs.New(errs.InvalidArgument, `%s of %s: the table is not partitioned: give "offsets"`, action, req.Table)
		}
		if _, err := e.tables.Table(info); err != nil {
			return nil, err
		}
	}
	return info, nil
}
