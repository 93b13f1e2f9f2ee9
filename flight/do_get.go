package flight

// DoGet redeems a ticket (engine.Ticket, JSON). Contract: the stream carries
// the ticket's result schema, then its batches in offset order, each under 4
// MiB with app_metadata {"bucket", "start", "next", "high_watermark"}. A
// bounded ticket ends at its stop offset; an unbounded one follows the log,
// sending an empty batch when idle, until the client cancels. A dropped
// table ends the stream with NOT_FOUND.

import (
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/engine"
)

func (s *Service) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	done, err := s.limits.openStream(stream.Context(), "DoGet")
	if err != nil {
		return s.toStatus("DoGet", err)
	}
	defer done()
	return s.toStatus("DoGet", s.doGet(t, stream))
}

func (s *Service) doGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	tk, err := engine.ParseTicket(t.GetTicket())
	if err != nil {
		return err
	}
	tagTable(stream.Context(), tk.Table)
	// The ticket's table_id, not its table name, says what it reads.
	if _, ok := s.caller(stream.Context()); ok {
		path, err := s.eng.TablePathOf(tk.TableID)
		if err != nil {
			return err
		}
		op := acl.Read
		if tk.Lookup != nil {
			op = lookupOp(tk.Lookup.InsertIfNotExists)
		}
		if err := s.authorize(stream.Context(), "DoGet", op, acl.Resource{Database: path.Database, Table: path.Table}); err != nil {
			return err
		}
	}
	if tk.View == engine.ViewLookup {
		return s.inlineLookup(tk, stream)
	}
	rs, err := s.eng.OpenRead(tk)
	if err != nil {
		return err
	}
	opts := []ipc.Option{ipc.WithSchema(rs.Schema()), ipc.WithAllocator(s.mem)}
	switch rs.Compression() {
	case "lz4_frame":
		opts = append(opts, ipc.WithLZ4())
	case "zstd":
		opts = append(opts, ipc.WithZstd())
	}
	w := flight.NewRecordWriter(stream, opts...)
	defer w.Close()
	return rs.Run(stream.Context(), func(rec arrow.RecordBatch, meta engine.BatchMeta) error {
		md, err := json.Marshal(meta)
		if err != nil {
			return err
		}
		return w.WriteWithAppMetadata(rec, md)
	})
}

// inlineLookup answers an inline lookup ticket with one batch.
func (s *Service) inlineLookup(tk engine.Ticket, stream flight.FlightService_DoGetServer) error {
	ans, meta, err := s.eng.InlineLookup(stream.Context(), tk)
	if err != nil {
		return err
	}
	defer ans.Release()
	w := flight.NewRecordWriter(stream, ipc.WithSchema(ans.Schema()), ipc.WithAllocator(s.mem))
	defer w.Close()
	md, _ := json.Marshal(meta)
	return w.WriteWithAppMetadata(ans, md)
}
