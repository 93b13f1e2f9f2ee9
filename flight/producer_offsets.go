package flight

// The producer-offsets actions (PROTOCOL.md §5.4): a sink that starts
// without state registers the offsets it starts from, so that the next
// attempt undoes a failed one back to them. Each needs write on the table:
// they exist to undo writes.

import (
	"context"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/protocol"
)

func (s *Service) producerRequest(ctx context.Context, body []byte, action string) (protocol.ProducerOffsetsRequest, error) {
	req, err := decode[protocol.ProducerOffsetsRequest](body, action)
	if err != nil {
		return protocol.ProducerOffsetsRequest{}, err
	}
	tagTable(ctx, req.Table)
	return req, s.authorizeTable(ctx, action, acl.Write, req.Table)
}

func (s *Service) registerProducerOffsets(ctx context.Context, body []byte) (any, error) {
	req, err := s.producerRequest(ctx, body, protocol.ActionRegisterProducerOffsets)
	if err != nil {
		return nil, err
	}
	res, err := s.eng.RegisterProducerOffsets(ctx, req)
	return protocol.RegisterResult(res), err
}

func (s *Service) getProducerOffsets(ctx context.Context, body []byte) (any, error) {
	req, err := s.producerRequest(ctx, body, protocol.ActionGetProducerOffsets)
	if err != nil {
		return nil, err
	}
	return s.eng.GetProducerOffsets(ctx, req)
}

func (s *Service) deleteProducerOffsets(ctx context.Context, body []byte) (any, error) {
	req, err := s.producerRequest(ctx, body, protocol.ActionDeleteProducerOffsets)
	if err != nil {
		return nil, err
	}
	return protocol.Empty{}, s.eng.DeleteProducerOffsets(ctx, req)
}
