package flight

import (
	"context"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/flightcodec"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// stallWatch is a DoGet stream that ends when its client takes nothing for
// the idle timeout: while the stream waits on its client (in Send, or with
// messages gRPC holds unwritten because the client's flow control window is
// full) and nothing was taken for that long, wherever the handler waits. A
// reader that stopped reading holds what it read against the memory budget
// (read_memory.go), and may wait for more of it, held by its own unwritten
// messages, outside Send; the watch ends it there too, through the stream's
// context. gRPC's Send cannot be interrupted, so a goroutine of the
// stream's calls it and hands back its result; when the watch ends the
// stream the handler returns, gRPC cancels the stream, and that goroutine's
// Send fails and it exits.
type stallWatch struct {
	flight.FlightService_DoGetServer
	ctx   context.Context // the stream's, ended by the watch
	stop  context.CancelCauseFunc
	idle  time.Duration
	sends chan any
	sent  chan error

	mu      sync.Mutex
	waiting int         // sends in progress and messages gRPC holds; guarded by mu
	timer   *time.Timer // runs while waiting > 0 and nothing was taken
}

// watchStalls returns stream watched for stalls, and a func that turns the
// error the handler returned into the stall's, if the watch ended it: the
// status that tells the client to resume (stalled); stream as it is if the
// idle timeout is never.
func (s *Service) watchStalls(stream flight.FlightService_DoGetServer) (flight.FlightService_DoGetServer, func(error) error) {
	if s.limits.StreamIdleTimeout < 0 {
		return stream, func(err error) error { return err }
	}
	ctx, stop := context.WithCancelCause(stream.Context())
	w := &stallWatch{FlightService_DoGetServer: stream, ctx: ctx, stop: stop, idle: s.limits.StreamIdleTimeout,
		sends: make(chan any), sent: make(chan error, 1)}
	w.timer = time.AfterFunc(w.idle, func() {
		stop(errs.New(errs.ResourceExhausted, "DoGet: the client took nothing for %s, the idle timeout", w.idle))
	})
	w.timer.Stop()
	go w.send()
	return w, func(err error) error {
		w.timer.Stop()
		stop(nil)
		if cause := context.Cause(ctx); err != nil && errs.KindOf(cause) == errs.ResourceExhausted {
			return stalled(stream, cause)
		}
		return err
	}
}

// arrowCapacityError is Arrow's StatusCode CapacityError, as its C++ Flight
// servers send it in the trailer x-arrow-status.
const arrowCapacityError = "6"

// stalled is the status of a stream ended for the idle timeout: RESOURCE_EXHAUSTED
// with the detail ErrorInfo{reason: STREAM_IDLE}, which a client tests to
// resume (PROTOCOL.md §1, Limits). The trailer x-arrow-status makes Arrow's
// C++ Flight client (pyarrow) hand the details to its caller, as
// FlightError.extra_info; without it they are dropped.
func stalled(stream flight.FlightService_DoGetServer, cause error) error {
	st, err := status.New(codes.ResourceExhausted, cause.Error()).WithDetails(
		&errdetails.ErrorInfo{Reason: protocol.ReasonStreamIdle, Domain: protocol.ErrorDomain})
	if err != nil { // a detail that does not marshal: a bug
		return err
	}
	stream.SetTrailer(metadata.Pairs("x-arrow-status", arrowCapacityError))
	return st.Err()
}

// Context is the stream's context, which the watch ends on a stall.
func (w *stallWatch) Context() context.Context { return w.ctx }

// send sends what SendMsg hands over until the stream ends.
func (w *stallWatch) send() {
	for {
		select {
		case m := <-w.sends:
			w.sent <- w.FlightService_DoGetServer.SendMsg(m)
		case <-w.ctx.Done():
			return
		}
	}
}

func (w *stallWatch) Send(fd *flight.FlightData) error {
	// A message of its own: after a stall the caller goes on with fd while
	// the goroutine may still be sending this one.
	return w.SendMsg(&flight.FlightData{FlightDescriptor: fd.FlightDescriptor, DataHeader: fd.DataHeader,
		AppMetadata: fd.AppMetadata, DataBody: fd.DataBody})
}

// SendMsg sends m, which the caller must not change afterwards (after a
// stall it may still be being sent).
func (w *stallWatch) SendMsg(m any) error {
	if err := context.Cause(w.ctx); err != nil {
		return err
	}
	if out, ok := m.(*flightcodec.Outgoing); ok {
		// gRPC holds it until it is written: the client takes it then.
		free := out.Free
		w.wait(1, false)
		out.Free = func() {
			w.wait(-1, true)
			free()
		}
	}
	select {
	case w.sends <- m:
	case <-w.ctx.Done():
		return context.Cause(w.ctx)
	}
	w.wait(1, false)
	select {
	case err := <-w.sent:
		w.wait(-1, true)
		return err
	case <-w.ctx.Done():
		return context.Cause(w.ctx)
	}
}

// wait counts n more things the stream waits on its client for; taken says
// the client took something, which starts the idle time over.
func (w *stallWatch) wait(n int, taken bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	before := w.waiting
	w.waiting += n
	switch {
	case w.waiting == 0:
		w.timer.Stop()
	case taken || before == 0:
		w.timer.Reset(w.idle)
	}
}
