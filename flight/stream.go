package flight

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/errs"
)

// clientStream is the receiving side of DoPut and DoExchange.
type clientStream interface {
	Recv() (*flight.FlightData, error)
	Context() context.Context
}

// streamErr is the error that ended a client's record stream: none at its
// end, the transport's as it is, and a decoding failure as invalid input.
func streamErr(rpc string, r interface{ Err() error }) error {
	err := r.Err()
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	if _, ok := grpcStatus(err); ok {
		return err
	}
	if errs.KindOf(err) != errs.Internal { // the intake's own, or the idle timeout
		return err
	}
	return errs.New(errs.InvalidArgument, "%s: malformed stream: %v", rpc, err)
}

// idleReader receives a client's messages with a timeout. gRPC's Recv cannot
// be interrupted, so a goroutine that owns the stream's receiving side calls
// it and hands each message over; on a timeout the handler returns the error,
// gRPC cancels the stream, and that goroutine's Recv fails and it exits. It
// never sends on the stream, and receives only when asked: a message it read
// ahead would be held outside the write budget.
type idleReader struct {
	rpc     string
	ctx     context.Context
	timeout time.Duration
	timer   *time.Timer
	want    chan struct{} // one Recv asked for
	msgs    chan recvResult
	err     error // sticky: once set, every Recv returns it
}

type recvResult struct {
	msg *flight.FlightData
	err error
}

func newIdleReader(rpc string, stream clientStream, timeout time.Duration) *idleReader {
	r := &idleReader{rpc: rpc, ctx: stream.Context(), timeout: timeout, timer: time.NewTimer(timeout),
		want: make(chan struct{}, 1), msgs: make(chan recvResult)}
	go r.pump(stream)
	return r
}

// pump receives until the stream ends or fails, or the handler is gone.
func (r *idleReader) pump(stream clientStream) {
	for {
		select {
		case <-r.want:
		case <-r.ctx.Done():
			return
		}
		msg, err := stream.Recv()
		select {
		case r.msgs <- recvResult{msg, err}:
		case <-r.ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

func (r *idleReader) Recv() (*flight.FlightData, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.want <- struct{}{} // never blocks: the last request was answered, or r.err is set
	r.timer.Reset(r.timeout)
	select {
	case m := <-r.msgs:
		if m.err != nil {
			r.err = m.err
		}
		return m.msg, m.err
	case <-r.timer.C:
		r.err = errs.New(errs.ResourceExhausted, "%s: the client sent nothing for %s, the idle timeout", r.rpc, r.timeout)
	case <-r.ctx.Done():
		r.err = status.FromContextError(r.ctx.Err()).Err()
	}
	return nil, r.err
}
