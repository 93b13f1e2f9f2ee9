package flight

// DoGet redeems a ticket (protocol.Ticket, JSON). Contract: the stream carries
// the ticket's result schema, then its batches in offset order, each under 4
// MiB with app_metadata {"bucket", "start", "next", "high_watermark"}. A
// bounded ticket ends at its stop offset; an unbounded one follows the log,
// sending an empty batch when idle, until the client cancels. A dropped
// table ends the stream with NOT_FOUND.

import (
	"bytes"
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/protocol"
)

func (s *Service) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	done, err := s.limits.openStream(stream.Context(), "DoGet")
	if err != nil {
		return s.toStatus("DoGet", err)
	}
	defer done()
	stream, stalled := s.watchStalls(stream)
	return s.toStatus("DoGet", stalled(s.doGet(t, stream)))
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
	if tk.View == protocol.ViewLookup {
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
	held := newReadMemory(s.limits.bytes)
	defer held.close()
	rs.HoldMemory(held)
	w := newBatchWriter(stream, held, rs.Schema(), s.mem, opts)
	defer w.Close()
	// The schema goes out before any batch is waited for: a follow from the
	// log's end may wait for data up to the heartbeat, and clients (pyarrow's
	// do_get) wait for the schema.
	if err := w.sendSchema(); err != nil {
		return err
	}
	rs.SendEncoded(w.writeEncoded)
	return rs.Run(stream.Context(), w.write)
}

// batchWriter sends a read's batches: records through arrow-go's IPC
// writer, and messages the store already holds encoded as they are.
type batchWriter struct {
	stream flight.FlightService_DoGetServer
	held   *readMemory // what the stream's messages hold of the budget
	schema *arrow.Schema
	mem    memory.Allocator
	ipc    *ipc.Writer
	md     []byte // app metadata of the batch being written
	// The schema goes out first (sendSchema); the IPC writer's first
	// payload, the schema again, is dropped.
	ipcStarted bool
}

func newBatchWriter(stream flight.FlightService_DoGetServer, held *readMemory, schema *arrow.Schema, mem memory.Allocator, opts []ipc.Option) *batchWriter {
	w := &batchWriter{stream: stream, held: held, schema: schema, mem: mem}
	w.ipc = ipc.NewWriterWithPayloadWriter((*payloadSender)(w), opts...)
	return w
}

func (w *batchWriter) write(rec arrow.RecordBatch, meta protocol.BatchMeta) error {
	md, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	w.md = md
	return w.ipc.Write(rec)
}

// sendSchema sends the stream's schema message.
func (w *batchWriter) sendSchema() error {
	p := ipc.GetSchemaPayload(w.schema, w.mem)
	defer p.Release()
	return w.send(&p, nil)
}

func (w *batchWriter) writeEncoded(msg engine.EncodedBatch, meta protocol.BatchMeta) error {
	md, err := json.Marshal(protocol.BatchMeta(meta))
	if err != nil {
		return err
	}
	body := sendBuffers.Get().(*bytes.Buffer)
	body.Reset()
	body.Grow(msg.BodyLen)
	for _, p := range msg.Body {
		body.Write(p)
	}
	return w.held.send(w.stream, msg.Meta, md, body)
}

// Close ends the IPC writer.
func (w *batchWriter) Close() error { return w.ipc.Close() }

// send sends an IPC writer's payload with app metadata md.
func (w *batchWriter) send(p *ipc.Payload, md []byte) error {
	meta := p.Meta()
	defer meta.Release()
	body := sendBuffers.Get().(*bytes.Buffer)
	body.Reset()
	if err := p.SerializeBody(body); err != nil {
		sendBuffers.Put(body)
		return err
	}
	return w.held.send(w.stream, meta.Bytes(), md, body)
}

// payloadSender is the batchWriter as the IPC writer's payload writer.
type payloadSender batchWriter

func (p *payloadSender) Start() error { return nil }
func (p *payloadSender) Close() error { return nil }

func (p *payloadSender) WritePayload(pl ipc.Payload) error {
	w := (*batchWriter)(p)
	if !w.ipcStarted {
		w.ipcStarted = true // this first payload is the schema, sent already
		return nil
	}
	return w.send(&pl, w.md)
}

// inlineLookup answers an inline lookup ticket, in slices as DoExchange
// answers a key batch.
func (s *Service) inlineLookup(tk protocol.Ticket, stream flight.FlightService_DoGetServer) error {
	ans, meta, err := s.eng.InlineLookup(stream.Context(), tk)
	if err != nil {
		return err
	}
	defer ans.Release()
	w := flight.NewRecordWriter(stream, ipc.WithSchema(ans.Schema()), ipc.WithAllocator(s.mem))
	defer w.Close()
	return s.sendLookupAnswer(w, ans, meta)
}
