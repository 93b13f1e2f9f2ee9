package flight

import (
	"log/slog"
	"math"

	"google.golang.org/grpc"

	"github.com/fluxgate-io/fluxgate/internal/flightcodec"
)

// The HTTP/2 transport's memory, per connection and per stream. gRPC holds
// what a client sends before the service reads it: up to a stream's flow
// control window for each open stream (the connection window is given back
// as data arrives, so it bounds nothing), and a read and a write buffer per
// connection. Stating the window also turns off gRPC's window estimation
// (BDP), which would grow each stream's window to 16 MiB under bulk
// transfers. A message being received is not held back by the window
// (gRPC opens it to the message's size once the service asks for it), and
// the service asks for one only with the write budget held (intake.go), so
// a small window costs bulk writes nothing.
const (
	streamWindowBytes = 64 << 10
	connWindowBytes   = 16 << 20 // lets many streams send at once; holds nothing
	connBufferBytes   = 64 << 10
)

// ServerOptions are the gRPC server options the Flight service is built
// for; a server that registers New(eng, opts) should pass
// ServerOptions(opts) (package server does): the message limit the service
// checks against (Limits.MessageBytes), the transport's windows and buffers
// above, at most twice Limits.StreamsPerClient streams on one connection
// (streaming calls past StreamsPerClient are refused as before, which the
// client hears at once; gRPC's clients queue streams past this bound
// instead), a codec that copies a received batch
// once instead of twice, and interceptors that turn a handler's panic into
// INTERNAL instead of ending the process (recover.go).
func ServerOptions(opts Options) []grpc.ServerOption {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	l := opts.Limits.withDefaults()
	streams := uint32(math.MaxUint32)
	if l.StreamsPerClient > 0 {
		streams = uint32(min(2*l.StreamsPerClient, math.MaxUint32))
	}
	return append([]grpc.ServerOption{
		grpc.MaxRecvMsgSize(l.MessageBytes),
		grpc.InitialWindowSize(streamWindowBytes),
		grpc.InitialConnWindowSize(connWindowBytes),
		grpc.ReadBufferSize(connBufferBytes),
		grpc.WriteBufferSize(connBufferBytes),
		grpc.MaxConcurrentStreams(streams),
		grpc.ForceServerCodecV2(flightcodec.New()),
	}, recoverPanics(log)...)
}
