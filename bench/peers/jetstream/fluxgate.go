package main

// The fluxgate side: the engine and Flight service of cmd/fluxgate serve,
// in this process on loopback TCP with serve's gRPC options and defaults,
// reached with the Go client.

import (
	"context"
	"fmt"

	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"

	"github.com/fluxgate-io/fluxgate/bench/benchdata"
	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	fgflight "github.com/fluxgate-io/fluxgate/flight"
)

type fluxgateSide struct {
	cfg     *config
	data    *benchdata.Narrow
	dir     string
	eng     *engine.Engine
	srv     flight.Server
	addr    string // the server's host:port
	cl      *client.Client
	table   string // the last appended table
	tableID int64
	lookups [][]arrow.RecordBatch // per run, the key batches of the gets
}

func startFluxgate(ctx context.Context, tmp string, cfg *config, data *benchdata.Narrow) (*fluxgateSide, error) {
	s := &fluxgateSide{cfg: cfg, data: data, dir: filepath.Join(tmp, "fluxgate")}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var err error
	if s.eng, err = engine.Open(ctx, s.dir, engine.Options{Logger: log}); err != nil {
		return nil, err
	}
	opts := fgflight.Options{Logger: log, Limits: fgflight.Limits{MessageBytes: 64 << 20}}
	s.srv = flight.NewServerWithMiddleware(nil, append([]grpc.ServerOption{
		// As cmd/fluxgate's startServer.
		grpc.MaxSendMsgSize(64 << 20),
		grpc.InitialWindowSize(16 << 20),
		grpc.InitialConnWindowSize(16 << 20),
		grpc.ReadBufferSize(1 << 20),
		grpc.WriteBufferSize(1 << 20),
	}, fgflight.ServerOptions(opts)...)...)
	s.srv.RegisterFlightService(fgflight.New(s.eng, opts))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.close()
		return nil, err
	}
	s.srv.InitListener(ln)
	go s.srv.Serve()
	s.addr = ln.Addr().String()
	if s.cl, err = client.Dial(ctx, s.addr); err != nil {
		s.close()
		return nil, err
	}
	if err := s.loadKV(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *fluxgateSide) close() {
	if s.cl != nil {
		s.cl.Close()
	}
	if s.srv != nil {
		s.srv.Shutdown()
	}
	if s.eng != nil {
		s.eng.Close()
	}
}

// append writes the batches to a new log table of default options with
// --partitions buckets, through one writer, and waits for every
// acknowledgement. The table before is dropped first (untimed).
func (s *fluxgateSide) append(ctx context.Context, rep int) (sample, error) {
	if err := s.newTable(ctx, rep); err != nil {
		return sample{}, err
	}
	start := time.Now()
	w, err := s.cl.NewWriter(ctx, client.WriteRequest{Table: s.table}, client.WithMaxInFlight(s.cfg.inFlight))
	if err != nil {
		return sample{}, err
	}
	for _, rec := range s.data.Recs {
		if err := w.Send(rec); err != nil {
			w.Close()
			return sample{}, err
		}
	}
	if err := w.Close(); err != nil {
		return sample{}, err
	}
	return sample{n: s.data.Rows, d: time.Since(start)}, nil
}

// newTable drops the last appended table and creates the one of run rep, a
// log table of default options but --codec, with --partitions buckets
// (untimed).
func (s *fluxgateSide) newTable(ctx context.Context, rep int) error {
	if s.table != "" {
		if err := s.cl.DropTable(ctx, s.table, false); err != nil {
			return err
		}
	}
	s.table = fmt.Sprintf("fluss.events_%d", rep)
	info, err := s.cl.CreateTable(ctx, client.TableSpec{
		Table: s.table, Columns: benchdata.NarrowColumns,
		Options: map[string]string{"bucket.num": fmt.Sprint(s.cfg.partitions), "table.log.arrow.compression.type": s.cfg.codec},
	}, false)
	if err != nil {
		return err
	}
	s.tableID = info.TableID
	return nil
}

// read scans the last appended table as stored, every batch decoded.
func (s *fluxgateSide) read(ctx context.Context) (sample, error) { return s.readAs(ctx, "") }

// readAs scans the last appended table asking for compression, every batch
// decoded.
func (s *fluxgateSide) readAs(ctx context.Context, compression string) (sample, error) {
	start := time.Now()
	sc, err := s.cl.Scan(ctx, client.ScanRequest{Table: s.table, Compression: compression})
	if err != nil {
		return sample{}, err
	}
	defer sc.Release()
	rows, err := countRows(sc)
	if err != nil {
		return sample{}, err
	}
	return fullRead(rows, s.data, start)
}

// readPlain reads the last appended table asking for compression, its
// endpoints one after the other with arrow-go's Flight reader (its own
// decompression), as a program without the fluxgate client does.
func (s *fluxgateSide) readPlain(ctx context.Context, compression string) (sample, error) {
	start := time.Now()
	plan, err := s.cl.Plan(ctx, client.ScanRequest{Table: s.table, Compression: compression})
	if err != nil {
		return sample{}, err
	}
	var rows int64
	for _, ep := range plan.Endpoints {
		stream, err := s.cl.Flight().DoGet(ctx, &flight.Ticket{Ticket: ep.Ticket})
		if err != nil {
			return sample{}, err
		}
		r, err := flight.NewRecordReader(stream)
		if err != nil {
			return sample{}, err
		}
		n, err := countRows(r)
		r.Release()
		if err != nil {
			return sample{}, err
		}
		rows += n
	}
	return fullRead(rows, s.data, start)
}

// loadKV writes keys 0..keys-1 into a primary-key table (untimed) and makes
// each run's key batches: every key once, in the order JetStream gets them.
func (s *fluxgateSide) loadKV(ctx context.Context) error {
	info, err := s.cl.CreateTable(ctx, benchdata.KVTable("fluss.kv", s.cfg.partitions), false)
	if err != nil {
		return err
	}
	schema, err := info.ArrowSchema()
	if err != nil {
		return err
	}
	w, err := s.cl.NewWriter(ctx, client.WriteRequest{Table: "fluss.kv"})
	if err != nil {
		return err
	}
	for from := 0; from < s.cfg.keys; from += s.cfg.batchRows {
		rec := benchdata.KVBatch(schema, from, min(from+s.cfg.batchRows, s.cfg.keys))
		err := w.Send(rec)
		rec.Release()
		if err != nil {
			w.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	keySchema := arrow.NewSchema(schema.Fields()[:1], nil)
	for rep := range s.cfg.reps {
		keys := getOrder(s.cfg.keys, rep)
		var batches []arrow.RecordBatch
		for from := 0; from < len(keys); from += benchdata.LookupBatch {
			batches = append(batches, benchdata.KeyBatch(keySchema, keys[from:min(from+benchdata.LookupBatch, len(keys))]))
		}
		s.lookups = append(s.lookups, batches)
	}
	return nil
}

// gets looks the run's keys up over one DoExchange stream, as fluxgate
// bench's lookup/point does, and checks that every key has its row.
func (s *fluxgateSide) gets(ctx context.Context, rep int) (sample, error) {
	start := time.Now()
	l, err := s.cl.Lookup(ctx, client.LookupRequest{Table: "fluss.kv"})
	if err != nil {
		return sample{}, err
	}
	defer l.Close()
	n, _, err := benchdata.PipelineLookups(l, s.lookups[rep])
	if err != nil {
		return sample{}, fmt.Errorf("lookup: %w", err)
	}
	return sample{n: n, d: time.Since(start)}, nil
}

func (s *fluxgateSide) stored() (int64, error) {
	return benchdata.DirSize(filepath.Join(s.dir, "tables", fmt.Sprint(s.tableID)))
}
