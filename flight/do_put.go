package flight

// DoPut writes a stream of record batches to a table. Contract: the first
// message carries the descriptor (PATH [database, table], or CMD {"write":
// WriteRequest}) and the schema; each batch is applied atomically and in
// order, and answered with one PutResult whose app_metadata is {"sequence",
// "rows", "buckets": {bucket: end offset}} once it is durable and visible. A
// failed batch ends the stream with the error at once, without waiting for
// the client's next message; the batches acknowledged before it stay.

import (
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/status"

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
	appending := false // then the appender releases in
	defer func() {
		if !appending {
			in.Release()
		}
	}()
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
	// Batches are appended by an appender goroutine while this one waits
	// for the earlier ones to become durable and acknowledges them in
	// order, so that one stream's fsyncs overlap its next batches.
	pending := make(chan pendingBatch, maxPendingBatches)
	appended := make(chan error, 1)
	failed := make(chan struct{})
	appending = true
	go func() {
		defer in.Release()
		err := s.appendAll(stream, in, ws, pending, failed)
		close(pending)
		appended <- err
	}()
	if err := s.ackInOrder(stream, pending); err != nil {
		// End the stream now, not when the client next sends: returning
		// makes gRPC cancel the stream, whose Recv then fails and stops the
		// appender. What it still hands over is let go of meanwhile.
		close(failed)
		go s.releasePending(pending)
		return err
	}
	return <-appended
}

// maxPendingBatches bounds the batches of one stream that are appended but
// not yet acknowledged.
const maxPendingBatches = 8

// appendAll appends the stream's batches until it ends or failed is closed:
// a batch after a failed one would be applied without an acknowledgement.
func (s *Service) appendAll(stream flight.FlightService_DoPutServer, in *intake, ws *engine.WriteStream, pending chan<- pendingBatch, failed <-chan struct{}) error {
	ctx := stream.Context()
	for in.Next() {
		// The batch's bytes are held against the server's memory budget
		// from its receipt (intake.go) until it is acknowledged, and so is
		// its encoding while it is appended (limits.go).
		b := pendingBatch{size: in.Take()}
		select {
		case <-failed:
			s.release(b)
			return nil
		default:
		}
		b.encoding = s.limits.encoding.capped(encodeFactor * b.size)
		if err := s.limits.encoding.acquire(ctx, b.encoding); err != nil {
			b.encoding = 0
			s.release(b)
			return status.FromContextError(err).Err()
		}
		p, err := ws.SubmitReceived(ctx, in.Batch(), in.Received())
		if err != nil {
			s.release(b)
			return err
		}
		// Appended: what stays of the encoding until the batch is written
		// is its stored copy.
		keep := min(b.size, b.encoding)
		s.limits.encoding.release(b.encoding - keep)
		b.PendingWrite, b.encoding = p, keep
		pending <- b
	}
	return in.Err()
}

// pendingBatch is an appended batch awaiting its acknowledgement, with what
// it holds of the memory budget.
type pendingBatch struct {
	*engine.PendingWrite
	size, encoding int64
}

// release gives back what b holds of the memory budget.
func (s *Service) release(b pendingBatch) {
	s.limits.bytes.release(b.size)
	s.limits.encoding.release(b.encoding)
}

// ackInOrder acknowledges the appended batches in order until the appender
// closes pending, or until one fails.
func (s *Service) ackInOrder(stream flight.FlightService_DoPutServer, pending <-chan pendingBatch) error {
	for p := range pending {
		res, err := p.Wait()
		s.release(p)
		if err != nil {
			return err
		}
		md, err := json.Marshal(res)
		if err != nil {
			return err
		}
		if err := stream.Send(&flight.PutResult{AppMetadata: md}); err != nil {
			return err
		}
	}
	return nil
}

// releasePending gives back the write budget of batches that will not be
// acknowledged, until the appender stops.
func (s *Service) releasePending(pending <-chan pendingBatch) {
	for p := range pending {
		s.release(p)
	}
}
