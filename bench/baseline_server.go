package bench

// The baseline Flight service of fluxgate bench, in process on loopback with
// the gRPC options of the real server: DoPut acknowledges every batch and
// keeps nothing (the no-op append baseline); DoGet sends the event batches
// held in memory (the scan baseline).

import (
	"encoding/json"
	"net"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc"
)

type benchBaselineService struct {
	flight.BaseFlightServer
	recs []arrow.RecordBatch
}

// DoPut answers each batch as fluxgate does (PROTOCOL.md §5), without storing it.
func (s *benchBaselineService) DoPut(stream flight.FlightService_DoPutServer) error {
	r, err := flight.NewRecordReader(stream)
	if err != nil {
		return err
	}
	defer r.Release()
	seq := 0
	for r.Next() {
		md, _ := json.Marshal(map[string]any{"sequence": seq, "rows": r.RecordBatch().NumRows(), "buckets": map[string]int{}})
		seq++
		if err := stream.Send(&flight.PutResult{AppMetadata: md}); err != nil {
			return err
		}
	}
	return r.Err()
}

// DoGet sends the batches held in memory, whatever the ticket.
func (s *benchBaselineService) DoGet(_ *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	w := flight.NewRecordWriter(stream, ipc.WithSchema(s.recs[0].Schema()))
	defer w.Close()
	for _, r := range s.recs {
		if err := w.WriteWithAppMetadata(r, []byte(`{}`)); err != nil {
			return err
		}
	}
	return nil
}

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
	srv.RegisterFlightService(&benchBaselineService{recs: recs})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv.InitListener(ln)
	go srv.Serve()
	return &benchBaselineServer{srv: srv, addr: ln.Addr().String()}, nil
}

func (s *benchBaselineServer) stop() { s.srv.Shutdown() }
