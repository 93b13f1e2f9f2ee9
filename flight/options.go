package flight

import (
	"google.golang.org/grpc"

	"github.com/fluxgate-io/fluxgate/internal/flightcodec"
)

// ServerOptions are the gRPC server options the Flight service is built
// for; a server that registers it should pass them (cmd/fluxgate does):
// a codec that copies a received batch once instead of twice.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ForceServerCodecV2(flightcodec.New())}
}
