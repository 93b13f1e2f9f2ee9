package flight

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/errs"
)

var kindCodes = map[errs.Kind]codes.Code{
	errs.InvalidArgument:    codes.InvalidArgument,
	errs.NotFound:           codes.NotFound,
	errs.AlreadyExists:      codes.AlreadyExists,
	errs.FailedPrecondition: codes.FailedPrecondition,
	errs.OutOfRange:         codes.OutOfRange,
	errs.DataLoss:           codes.DataLoss,
	errs.ResourceExhausted:  codes.ResourceExhausted,
	errs.Unauthenticated:    codes.Unauthenticated,
	errs.PermissionDenied:   codes.PermissionDenied,
	errs.Unimplemented:      codes.Unimplemented,
	errs.Unavailable:        codes.Unavailable,
}

// maxMessageBytes bounds the message of a status: a message quotes at most
// 64 bytes of each client string (errs.Quote), and this cuts whatever else
// grew large (a list of a wide table's columns), since gRPC sends the message
// in a header, which clients take up to 8 or 16 KiB of.
const maxMessageBytes = 4096

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
			return status.Error(code, boundedMessage(err.Error()))
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
	return status.Error(codes.Internal, boundedMessage(fmt.Sprintf("internal error (trace id %s): %v", id, err)))
}

// boundedMessage cuts msg to maxMessageBytes, at a character boundary, saying
// how long it was.
func boundedMessage(msg string) string {
	if len(msg) <= maxMessageBytes {
		return msg
	}
	n := maxMessageBytes
	for n > 0 && !utf8.RuneStart(msg[n]) {
		n--
	}
	return fmt.Sprintf("%s... (cut from %d bytes)", msg[:n], len(msg))
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
