package flight

import (
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/fluxgate-io/fluxgate/errs"
)

// openStream reads the first message of a client's record stream (DoPut,
// DoExchange): it must carry the descriptor and the schema.
func (s *Service) openStream(rpc string, stream flight.DataStreamReader) (*flight.Reader, error) {
	r, err := flight.NewRecordReader(stream, ipc.WithAllocator(s.mem))
	if err == nil {
		return r, nil
	}
	if errors.Is(err, io.EOF) {
		return nil, errs.New(errs.Invalid, "%s: the stream ended before a schema was sent", rpc)
	}
	return nil, errs.New(errs.Invalid, "%s: the first message must carry the descriptor and an Arrow schema: %v", rpc, err)
}

// streamErr is the error that ended a client's record stream: none at its
// end, the transport's as it is, and a decoding failure as invalid input.
func streamErr(rpc string, r *flight.Reader) error {
	err := r.Err()
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	if _, ok := grpcStatus(err); ok {
		return err
	}
	return errs.New(errs.Invalid, "%s: malformed stream: %v", rpc, err)
}
