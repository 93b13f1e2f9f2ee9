package flight

// DoPut writes a stream of record batches to a table. Contract: the first
// message carries the descriptor (PATH [database, table], or CMD {"write":
// WriteRequest}) and the schema; each batch is applied atomically and in
// order, and answered with one PutResult whose app_metadata is {"sequence",
// "rows", "buckets": {bucket: end offset}} once it is durable and visible. A
// failed batch ends the stream with the error; the batches acknowledged
// before it stay.

import (
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/engine"
)

func (s *Service) DoPut(stream flight.FlightService_DoPutServer) error {
	done, err := s.limits.openStream(stream.Context(), "DoPut")
	if err != nil {
		return s.toStatus("DoPut", err)
	}
	defer done()
	return s.toStatus("DoPut", s.doPut(stream))
}

func (s *Service) doPut(stream flight.FlightService_DoPutServer) error {
	in, err := s.openIntake("DoPut", stream, s.limits.bytes)
	if err != nil {
		return err
	}
	defer in.Release()
	req, err := writeRequest(in.Descriptor())
	if err != nil {
		return err
	}
	tagTable(stream.Context(), req.Table)
	if err := s.authorizeTable(stream.Context(), "DoPut", acl.Write, req.Table); err != nil {
		return err
	}
	ws, err := s.eng.OpenWrite(req)
	if err != nil {
		return err
	}
	// Batches are appended here while an acker goroutine waits for the
	// earlier ones to become durable and acknowledges them in order, so that
	// one stream's fsyncs overlap its next batches.
	pending := make(chan pendingBatch, maxPendingBatches)
	acked := make(chan error, 1)
	go func() { acked <- s.ackInOrder(stream, pending) }()
	err = s.appendAll(stream, in, ws, pending)
	close(pending)
	if ackErr := <-acked; err == nil {
		err = ackErr
	}
	return err
}

// maxPendingBatches bounds the batches of one stream that are appended but
// not yet acknowledged.
const maxPendingBatches = 8

func (s *Service) appendAll(stream flight.FlightService_DoPutServer, in *intake, ws *engine.WriteStream, pending chan<- pendingBatch) error {
	ctx := stream.Context()
	for in.Next() {
		// The batch's bytes are held against the server's write budget from
		// its receipt (intake.go) until it is acknowledged.
		size := in.Take()
		p, err := ws.Submit(ctx, in.Batch())
		if err != nil {
			s.limits.bytes.release(size)
			return err
		}
		pending <- pendingBatch{p, size}
	}
	return in.Err()
}

// pendingBatch is an appended batch awaiting its acknowledgement.
type pendingBatch struct {
	*engine.PendingWrite
	size int64
}

func (s *Service) ackInOrder(stream flight.FlightService_DoPutServer, pending <-chan pendingBatch) error {
	var failed error
	for p := range pending {
		if failed != nil {
			s.limits.bytes.release(p.size)
			continue // drain, so the appender never blocks
		}
		res, err := p.Wait()
		s.limits.bytes.release(p.size)
		if err != nil {
			failed = err
			continue
		}
		md, err := json.Marshal(res)
		if err == nil {
			err = stream.Send(&flight.PutResult{AppMetadata: md})
		}
		failed = err
	}
	return failed
}
