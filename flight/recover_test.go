package flight_test

import (
	"context"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/engine"
	fgflight "github.com/fluxgate-io/fluxgate/flight"
	"github.com/fluxgate-io/fluxgate/internal/syncbuf"
)

// panicky is the service with handlers made to panic: GetFlightInfo (unary)
// for a descriptor "panic", DoPut (streaming) always.
type panicky struct{ *fgflight.Service }

func (p panicky) GetFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if string(d.GetCmd()) == "panic" {
		panic("injected unary panic")
	}
	return p.Service.GetFlightInfo(ctx, d)
}

func (p panicky) DoPut(flight.FlightService_DoPutServer) error { panic("injected stream panic") }

// A panic in a handler fails that call with INTERNAL and a trace id, logged
// with its stack under the same id, and the server goes on serving.
func TestHandlerPanicIsInternalAndServingGoesOn(t *testing.T) {
	eng, err := engine.Open(t.Context(), t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var logs syncbuf.Buffer
	opts := fgflight.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	srv := flight.NewServerWithMiddleware(nil, fgflight.ServerOptions(opts)...)
	srv.RegisterFlightService(panicky{fgflight.New(eng, opts)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.InitListener(ln)
	go srv.Serve()
	defer srv.Shutdown()
	cl, err := flight.NewClientWithMiddleware(ln.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := ctxT(t)

	_, err = cl.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("panic")})
	assertPanicReported(t, err, &logs, "injected unary panic")

	put, err := cl.DoPut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = put.Recv()
	assertPanicReported(t, err, &logs, "injected stream panic")

	// The server still serves: a call that does not panic answers as usual.
	_, err = cl.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"fluss", "missing"}})
	wantCode(t, err, codes.NotFound)
}

var traceIDRe = regexp.MustCompile(`trace id ([0-9a-f]{16})`)

func assertPanicReported(t *testing.T, err error, logs *syncbuf.Buffer, panicMsg string) {
	t.Helper()
	wantCode(t, err, codes.Internal)
	m := traceIDRe.FindStringSubmatch(status.Convert(err).Message())
	if m == nil {
		t.Fatalf("INTERNAL without a trace id: %v", err)
	}
	var entry string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "trace_id="+m[1]) {
			entry = line
		}
	}
	if !strings.Contains(entry, panicMsg) || !strings.Contains(entry, "goroutine") {
		t.Fatalf("no log entry with trace id %s, the panic and its stack; logs:\n%s", m[1], logs.String())
	}
}
