package auth

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// actionsServer lists one action and refuses to run any.
type actionsServer struct{ flight.BaseFlightServer }

func (*actionsServer) ListActions(_ *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	return stream.Send(&flight.ActionType{Type: "describe-table"})
}

// ListActions answers without credentials, as PROTOCOL.md §8 says and
// Flight clients that look a server over before signing in expect; every
// other call still needs a token, and a bad token is refused on ListActions
// too.
func TestListActionsNeedsNoToken(t *testing.T) {
	a, err := New(testUsers(t, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := flight.NewServerWithMiddleware(a.Middleware())
	srv.RegisterFlightService(&actionsServer{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.InitListener(ln)
	go srv.Serve()
	t.Cleanup(srv.Shutdown)
	fc, err := flight.NewClientWithMiddleware(ln.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	list := func(ctx context.Context) error {
		stream, err := fc.ListActions(ctx, &flight.Empty{})
		if err != nil {
			return err
		}
		at, err := stream.Recv()
		if err == nil && at.Type != "describe-table" {
			t.Errorf("ListActions listed %q", at.Type)
		}
		return err
	}
	if err := list(ctx); err != nil {
		t.Fatalf("ListActions without a token: %v", err)
	}
	if err := list(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer forged")); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("ListActions with a forged token: %v, want UNAUTHENTICATED", err)
	}
	stream, err := fc.DoAction(ctx, &flight.Action{Type: "describe-table"})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("DoAction without a token: %v, want UNAUTHENTICATED", err)
	}
}
