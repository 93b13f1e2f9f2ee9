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
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/fluxgate-io/fluxgate/errs"
)

func (s *Service) DoPut(stream flight.FlightService_DoPutServer) error {
	return s.toStatus("DoPut", s.doPut(stream))
}

func (s *Service) doPut(stream flight.FlightService_DoPutServer) error {
	r, err := flight.NewRecordReader(stream, ipc.WithAllocator(s.mem))
	if err != nil {
		if errors.Is(err, io.EOF) {
			return errs.New(errs.Invalid, "DoPut: the stream ended before a schema was sent")
		}
		return errs.New(errs.Invalid, "DoPut: the first message must carry the descriptor and an Arrow schema: %v", err)
	}
	defer r.Release()
	req, err := writeRequest(r.LatestFlightDescriptor())
	if err != nil {
		return err
	}
	ws, err := s.eng.OpenWrite(req)
	if err != nil {
		return err
	}
	ctx := stream.Context()
	for r.Next() {
		res, err := ws.Write(ctx, r.RecordBatch())
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
	if err := r.Err(); err != nil && !errors.Is(err, io.EOF) {
		if _, ok := grpcStatus(err); ok {
			return err
		}
		return errs.New(errs.Invalid, "DoPut: malformed stream: %v", err)
	}
	return nil
}
