package auth

import (
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// publicListActions lets a ListActions call without credentials through
// next, arrow-go's bearer-token check (PROTOCOL.md §8): its answer is the
// same for every caller, and Flight clients ask for it to learn a server
// before they authenticate. Credentials that come with it are checked as on
// any call.
func publicListActions(next grpc.StreamServerInterceptor) grpc.StreamServerInterceptor {
	return func(srv any, stream grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if strings.HasSuffix(info.FullMethod, "/ListActions") && len(metadata.ValueFromIncomingContext(stream.Context(), "authorization")) == 0 {
			return handler(srv, stream)
		}
		return next(srv, stream, info, handler)
	}
}
