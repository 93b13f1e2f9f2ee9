package engine

import (
	"context"
	"maps"
	"unicode"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/producer"
	"github.com/fluxgate-io/fluxgate/protocol"
)

const maxProducerID = 256

// RegisterProducerOffsets stores per-bucket offsets of a table under a
// producer id unless some are stored already (create-if-absent).
func (e *Engine) RegisterProducerOffsets(ctx context.Context, req protocol.ProducerOffsetsRequest) (protocol.RegisterResult, error) {
	id, buckets, err := e.producerTable(req, "register-producer-offsets")
	if err != nil {
		return protocol.RegisterResult{}, err
	}
	offsets, err := protocol.BucketOffsets(req.Offsets, "register-producer-offsets offsets")
	if err != nil {
		return protocol.RegisterResult{}, err
	}
	if len(offsets) == 0 {
		return protocol.RegisterResult{}, errs.New(errs.Invalid, "register-producer-offsets of %s: no offsets", req.Table)
	}
	for b := range offsets {
		if b >= buckets {
			return protocol.RegisterResult{}, errs.New(errs.Invalid, "register-producer-offsets of %s: bucket %d does not exist (%d buckets)", req.Table, b, buckets)
		}
	}
	created, err := e.producers.Register(req.ProducerID, req.Table, producer.Offsets{TableID: id, Buckets: offsets})
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
	id, _, err := e.producerTable(req, "get-producer-offsets")
	if err != nil {
		return protocol.ProducerOffsets{}, err
	}
	offs, ok := e.producers.Get(req.ProducerID, req.Table, id)
	if !ok {
		return protocol.ProducerOffsets{}, nil
	}
	return protocol.ProducerOffsets{Offsets: maps.Clone(offs.Buckets)}, nil // a copy: the store's map is its own
}

// DeleteProducerOffsets removes the offsets registered under a producer id;
// removing none is no error.
func (e *Engine) DeleteProducerOffsets(ctx context.Context, req protocol.ProducerOffsetsRequest) error {
	if _, _, err := e.producerTable(req, "delete-producer-offsets"); err != nil {
		return err
	}
	return e.producers.Delete(req.ProducerID, req.Table)
}

// producerTable checks a request's producer id and returns its table's id
// and bucket count.
func (e *Engine) producerTable(req protocol.ProducerOffsetsRequest, action string) (int64, int, error) {
	if req.ProducerID == "" || len(req.ProducerID) > maxProducerID {
		return 0, 0, errs.New(errs.Invalid, "%s: producer_id must have 1 to %d bytes", action, maxProducerID)
	}
	for _, r := range req.ProducerID {
		if unicode.IsControl(r) {
			return 0, 0, errs.New(errs.Invalid, "%s: producer_id %q has a control character", action, req.ProducerID)
		}
	}
	t, path, err := e.resolve(req.Table)
	if err != nil {
		return 0, 0, err
	}
	if path.View != "" {
		return 0, 0, errs.New(errs.Invalid, "%s: %s is a view, not a table", action, path.FullName())
	}
	info := t.current().info
	return info.TableID, info.BucketCount(), nil
}
