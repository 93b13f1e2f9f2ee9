package bench

// The baseline Flight server of fluxgate bench: benchdata.BaselineFlight over
// the event batches, in process on loopback with the gRPC options of the real
// server.

import (
	"net"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"

	"github.com/fluxgate-io/fluxgate/bench/benchdata"
)

type benchBaselineServer struct {
	srv  flight.Server
	addr string
}

func startBenchBaselineServer(recs []arrow.RecordBatch) (*benchBaselineServer, error) {
	srv := flight.NewServerWithMiddleware(nil,
		// As startServer.
		grpc.MaxRecvMsgSize(64<<20),
		grpc.MaxSendMsgSize(64<<20),
		grpc.InitialWindowSize(16<<20),
		grpc.InitialConnWindowSize(16<<20),
		grpc.ReadBufferSize(1<<20),
		grpc.WriteBufferSize(1<<20),
	)
	srv.RegisterFlightService(&benchdata.BaselineFlight{Recs: recs})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv.InitListener(ln)
	go srv.Serve()
	return &benchBaselineServer{srv: srv, addr: ln.Addr().String()}, nil
}

func (s *benchBaselineServer) stop() { s.srv.Shutdown() }
