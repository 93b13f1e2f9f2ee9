package flight

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/errs"
)

var kindCodes = map[errs.Kind]codes.Code{
	errs.Invalid:          codes.InvalidArgument,
	errs.NotFound:         codes.NotFound,
	errs.AlreadyExists:    codes.AlreadyExists,
	errs.Precondition:     codes.FailedPrecondition,
	errs.OutOfRange:       codes.OutOfRange,
	errs.DataLoss:         codes.DataLoss,
	errs.Exhausted:        codes.ResourceExhausted,
	errs.Unauthenticated:  codes.Unauthenticated,
	errs.PermissionDenied: codes.PermissionDenied,
	errs.Unimplemented:    codes.Unimplemented,
	errs.Unavailable:      codes.Unavailable,
}

// toStatus is the one mapping from errors to gRPC statuses (PROTOCOL.md §1).
// Errors without a kind are bugs: they are logged with a trace id, which the
// client sees too.
func (s *Service) toStatus(rpc string, err error) error {
	if err == nil {
		return nil
	}
	var ke *errs.Error
	if errors.As(err, &ke) {
		if code, ok := kindCodes[ke.Kind]; ok {
			return status.Error(code, err.Error())
		}
	}
	if st, ok := status.FromError(err); ok {
		return st.Err()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	id := traceID()
	s.log.Error("internal error", "rpc", rpc, "trace_id", id, "err", err)
	return status.Errorf(codes.Internal, "internal error (trace id %s): %v", id, err)
}

func traceID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// grpcStatus reports whether err is (or wraps) a gRPC status, such as a
// cancelled stream, as opposed to a decoding error.
func grpcStatus(err error) (*status.Status, bool) {
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus(), true
	}
	return nil, false
}
