package flight

import (
	"log/slog"

	"google.golang.org/grpc"

	"github.com/fluxgate-io/fluxgate/internal/flightcodec"
)

// ServerOptions are the gRPC server options the Flight service is built
// for; a server that registers New(eng, opts) should pass
// ServerOptions(opts) (package server does): the message limit the service
// checks against (Limits.MessageBytes), a codec that copies a received batch
// once instead of twice, and interceptors that turn a handler's panic into
// INTERNAL instead of ending the process (recover.go).
func ServerOptions(opts Options) []grpc.ServerOption {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return append([]grpc.ServerOption{
		grpc.MaxRecvMsgSize(opts.Limits.withDefaults().MessageBytes),
		grpc.ForceServerCodecV2(flightcodec.New()),
	}, recoverPanics(log)...)
}
