package flight

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// recoverPanics returns the interceptors that turn a panic in a handler into
// INTERNAL with a trace id, logged with its stack under the same id, so that
// one bad call fails alone and the server goes on serving. They see only the
// handler's own goroutine: a goroutine a handler starts recovers itself or
// must not panic.
func recoverPanics(log *slog.Logger) []grpc.ServerOption {
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				resp, err = nil, panicked(log, info.FullMethod, p)
			}
		}()
		return handler(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = panicked(log, info.FullMethod, p)
			}
		}()
		return handler(srv, ss)
	}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(unary), grpc.ChainStreamInterceptor(stream)}
}

func panicked(log *slog.Logger, method string, p any) error {
	id := traceID()
	log.Error("panic in handler", "rpc", method, "trace_id", id, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	return status.Errorf(codes.Internal, "internal error (trace id %s): the server failed handling %s", id, method)
}
