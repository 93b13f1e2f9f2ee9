package client

// Lookups (PROTOCOL.md §6): point and prefix lookups of primary-key tables
// and insert-if-not-exists, streamed through one DoExchange call, or inline
// through GetFlightInfo and DoGet for small key sets.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// KeyIndexColumn is the first column of every lookup answer: the row of the
// key in the request batch (INT32).
const KeyIndexColumn = protocol.KeyIndexColumn

// DefaultLookupMaxInFlight is how many key batches a Lookuper sends ahead of
// their answers by default.
const DefaultLookupMaxInFlight = 16

// LookupRequest is the {"lookup": ...} command of DoExchange (PROTOCOL.md
// §6.1). Zero fields take the server's defaults; Keys is for LookupInline.
type LookupRequest = protocol.LookupRequest

// LookupMeta is the app_metadata of one lookup answer.
type LookupMeta = protocol.LookupMeta

// ParseLookupMeta parses the app_metadata of a lookup answer.
func ParseLookupMeta(appMetadata []byte) (LookupMeta, error) {
	var m LookupMeta
	if len(bytes.TrimSpace(appMetadata)) == 0 {
		return m, errors.New("lookup answer without app_metadata")
	}
	if err := json.Unmarshal(appMetadata, &m); err != nil {
		return m, fmt.Errorf("lookup answer app_metadata %q: %w", truncate(appMetadata), err)
	}
	return m, nil
}

// LookupOption configures Lookup.
type LookupOption func(*Lookuper)

// WithLookupMaxInFlight sets how many key batches may be sent and not yet
// answered by the server before Send blocks (default
// DefaultLookupMaxInFlight).
func WithLookupMaxInFlight(n int) LookupOption {
	return func(l *Lookuper) {
		if n > 0 {
			l.maxInFlight = n
		}
	}
}

// Lookuper looks keys up through one DoExchange stream (PROTOCOL.md §6.1).
// Each key batch sent gets one answer: a record batch of _key_index (INT32,
// the key's row in the key batch) and the requested columns, rows ascending
// by _key_index, keys without a match absent (prefix lookups: one row per
// matching table row).
//
// Lookup is the simple, synchronous form. For throughput, Send many key
// batches and take their answers with Recv, in Send order: the server works
// on batches while later ones are in transit. Answers that arrive before
// Recv asks for them are queued. Send, Lookup and Close must be called from
// one goroutine; Recv may be called from another.
//
// Every batch sent must have the schema of the first. The answers the
// Lookuper returns belong to the caller, who releases them.
type Lookuper struct {
	c           *Client
	desc        *flight.FlightDescriptor
	table       string
	stream      flight.FlightService_DoExchangeClient
	cancel      context.CancelFunc
	maxInFlight int

	// Used only by the sending goroutine.
	fw         *flight.Writer
	schema     *arrow.Schema
	sendErr    error
	sendClosed bool
	sent       bool

	sem      chan struct{} // one token per batch sent and not yet answered
	recvDone chan struct{} // closed when the receive loop ends (once started)

	mu struct {
		sync.Mutex
		cond    *sync.Cond
		answers []answer // received, not yet handed out
		pending int      // batches sent whose answer is not yet handed out
		recvErr error    // how the receive loop ended: io.EOF or the stream's error
		sendErr error    // the sending side's sticky error, already wrapped
		closed  bool     // no more Sends
	}
}

type answer struct {
	rec  arrow.RecordBatch
	meta LookupMeta
	err  error
}

// Lookup opens a lookup stream for req. Nothing is sent until the first key
// batch, whose schema fixes the stream's; errors about the request itself
// (an unknown table, a prefix lookup without a prefix index) come with the
// first answer.
func (c *Client) Lookup(ctx context.Context, req LookupRequest, opts ...LookupOption) (*Lookuper, error) {
	if req.Table == "" {
		return nil, errors.New("lookup: no table")
	}
	cmd, err := json.Marshal(map[string]LookupRequest{"lookup": req})
	if err != nil {
		return nil, fmt.Errorf("lookup %s: %w", req.Table, err)
	}
	l, err := c.openLookup(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd}, req.Table, opts)
	if err != nil {
		return nil, fmt.Errorf("lookup %s: %w", req.Table, err)
	}
	return l, nil
}

// LookupDescriptor opens a lookup stream with any descriptor, for commands
// that LookupRequest cannot express.
func (c *Client) LookupDescriptor(ctx context.Context, desc *flight.FlightDescriptor, opts ...LookupOption) (*Lookuper, error) {
	table := ""
	var cmd struct {
		Lookup struct {
			Table string `json:"table"`
		} `json:"lookup"`
	}
	if desc.Type == flight.DescriptorCMD && json.Unmarshal(desc.Cmd, &cmd) == nil {
		table = cmd.Lookup.Table
	}
	l, err := c.openLookup(ctx, desc, table, opts)
	if err != nil {
		return nil, fmt.Errorf("lookup %s: %w", table, err)
	}
	return l, nil
}

func (c *Client) openLookup(ctx context.Context, desc *flight.FlightDescriptor, table string, opts []LookupOption) (*Lookuper, error) {
	l := &Lookuper{c: c, desc: desc, table: table, maxInFlight: DefaultLookupMaxInFlight}
	for _, o := range opts {
		o(l)
	}
	sctx, cancel := context.WithCancel(ctx)
	stream, err := c.fc.DoExchange(sctx)
	if err != nil {
		cancel()
		return nil, err
	}
	l.stream, l.cancel = stream, cancel
	l.sem = make(chan struct{}, l.maxInFlight)
	l.recvDone = make(chan struct{})
	l.mu.cond = sync.NewCond(&l.mu.Mutex)
	return l, nil
}

func (l *Lookuper) wrap(err error) error { return fmt.Errorf("lookup %s: %w", l.table, err) }

// Lookup sends one key batch and waits for its answer. It must not be used
// while answers of earlier Sends are outstanding (take them with Recv
// first). The caller keeps ownership of keys and releases the answer.
func (l *Lookuper) Lookup(keys arrow.RecordBatch) (arrow.RecordBatch, LookupMeta, error) {
	l.mu.Lock()
	outstanding := l.mu.pending
	l.mu.Unlock()
	if outstanding > 0 {
		return nil, LookupMeta{}, l.wrap(fmt.Errorf("Lookup with %d Send answers outstanding; use Recv first", outstanding))
	}
	if err := l.Send(keys); err != nil {
		return nil, LookupMeta{}, err
	}
	return l.Recv()
}

// Send sends a key batch without waiting for its answer; each Send has one
// answer, returned by Recv in Send order. Send blocks while the in-flight
// limit is reached. The caller keeps ownership of keys.
func (l *Lookuper) Send(keys arrow.RecordBatch) error {
	if l.sendClosed {
		return l.wrap(errStreamClosed)
	}
	if l.sendErr != nil {
		return l.sendErr
	}
	select {
	case <-l.recvDone:
		// The server ended the stream: report how.
		return l.failSend(io.EOF)
	default:
	}
	first := l.fw == nil
	if first {
		l.schema = keys.Schema()
		l.fw = flight.NewRecordWriter(l.stream, ipc.WithSchema(l.schema), ipc.WithAllocator(l.c.mem))
		l.fw.SetFlightDescriptor(l.desc)
	} else if !l.schema.Equal(keys.Schema()) {
		return l.wrap(fmt.Errorf("key batch schema %s differs from the stream's schema %s", keys.Schema(), l.schema))
	}
	select {
	case l.sem <- struct{}{}:
	case <-l.recvDone:
		return l.failSend(io.EOF)
	}
	l.mu.Lock()
	l.mu.pending++
	l.mu.Unlock()
	l.sent = true
	err := l.fw.Write(keys)
	if first {
		// flight.NewRecordReader blocks until the first message comes, so
		// the reader starts only once there is something to answer.
		go l.receive()
	}
	if err != nil {
		return l.failSend(err)
	}
	return nil
}

// failSend makes a send error sticky and ends the stream. io.EOF from gRPC
// means the server ended the stream: its status is what the receive side got.
func (l *Lookuper) failSend(err error) error {
	if errors.Is(err, io.EOF) {
		<-l.recvDone
		l.mu.Lock()
		err = l.mu.recvErr
		l.mu.Unlock()
		if errors.Is(err, io.EOF) {
			err = status.Error(codes.Unavailable, "the server closed the lookup stream")
		}
	}
	l.sendErr = l.wrap(err)
	l.cancel()
	l.mu.Lock()
	l.mu.sendErr = l.sendErr
	l.mu.cond.Broadcast()
	l.mu.Unlock()
	return l.sendErr
}

// Recv returns the answer to the oldest Send whose answer has not been
// returned yet, waiting for it. After CloseSend, once every answer has been
// returned, Recv returns io.EOF; Recv blocks while nothing is pending and
// the stream is open. The caller releases the answer.
func (l *Lookuper) Recv() (arrow.RecordBatch, LookupMeta, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if len(l.mu.answers) > 0 {
			a := l.mu.answers[0]
			l.mu.answers = l.mu.answers[1:]
			if l.mu.pending > 0 {
				l.mu.pending--
			}
			if a.err != nil {
				return nil, LookupMeta{}, l.wrap(a.err)
			}
			return a.rec, a.meta, nil
		}
		if l.mu.pending > 0 {
			if l.mu.sendErr != nil {
				return nil, LookupMeta{}, l.mu.sendErr
			}
			if err := l.mu.recvErr; err != nil {
				if errors.Is(err, io.EOF) {
					err = status.Errorf(codes.Internal, "the server ended the lookup stream with %d answers missing", l.mu.pending)
				}
				return nil, LookupMeta{}, l.wrap(err)
			}
		} else {
			if l.mu.sendErr != nil {
				return nil, LookupMeta{}, l.mu.sendErr
			}
			if err := l.mu.recvErr; err != nil && !errors.Is(err, io.EOF) {
				return nil, LookupMeta{}, l.wrap(err)
			}
			if l.mu.closed || l.mu.recvErr != nil {
				return nil, LookupMeta{}, io.EOF
			}
		}
		l.mu.cond.Wait()
	}
}

// Pending returns how many batches were sent whose answers Recv has not
// returned yet.
func (l *Lookuper) Pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.pending
}

// Schema returns the schema of the key batches, nil before the first Send.
func (l *Lookuper) Schema() *arrow.Schema { return l.schema }

// CloseSend ends the stream's send side; answers still arrive through Recv.
func (l *Lookuper) CloseSend() error {
	if l.sendClosed {
		return nil
	}
	l.sendClosed = true
	l.mu.Lock()
	l.mu.closed = true
	l.mu.cond.Broadcast()
	l.mu.Unlock()
	if !l.sent {
		// Nothing was written: end the call rather than send the server a
		// stream without a descriptor.
		l.cancel()
		return nil
	}
	_ = l.fw.Close()
	if err := l.stream.CloseSend(); err != nil && l.sendErr == nil {
		return l.failSend(err)
	}
	return nil
}

// Close ends the stream, waits for the answers of every Send and returns the
// first error of the stream or of an answer not yet returned by Recv, or
// reports answers that never came. Answers not yet returned by Recv are
// released.
func (l *Lookuper) Close() error {
	err := l.CloseSend()
	if !l.sent {
		return l.sendErr
	}
	for err == nil {
		rec, _, rerr := l.Recv()
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				err = rerr
			}
			break
		}
		rec.Release()
	}
	if err == nil {
		<-l.recvDone
		l.mu.Lock()
		if rerr := l.mu.recvErr; !errors.Is(rerr, io.EOF) {
			err = l.wrap(rerr)
		}
		l.mu.Unlock()
	}
	l.cancel()
	<-l.recvDone
	l.mu.Lock()
	for _, a := range l.mu.answers {
		if a.rec != nil {
			a.rec.Release()
		}
	}
	l.mu.answers = nil
	l.mu.Unlock()
	if err == nil {
		err = l.sendErr
	}
	return err
}

// receive collects the server's answers until the stream ends.
func (l *Lookuper) receive() {
	defer close(l.recvDone)
	end := func(err error) {
		l.mu.Lock()
		l.mu.recvErr = err
		l.mu.cond.Broadcast()
		l.mu.Unlock()
	}
	rdr, err := flight.NewRecordReader(l.stream, ipc.WithAllocator(l.c.mem))
	if err != nil {
		end(err)
		return
	}
	defer rdr.Release()
	var parts []arrow.RecordBatch // the messages of the answer being received
	defer func() { releaseAll(parts) }()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		a := answer{}
		if a.meta, a.err = ParseLookupMeta(rdr.LatestAppMetadata()); a.err != nil {
			a.err = status.Error(codes.Internal, a.err.Error())
		} else {
			rec.Retain()
			parts = append(parts, rec)
			if a.meta.More {
				continue
			}
			a.rec, a.err = joinAnswer(parts, a.meta, l.c.mem)
			parts = nil
		}
		l.mu.Lock()
		l.mu.answers = append(l.mu.answers, a)
		l.mu.cond.Broadcast()
		l.mu.Unlock()
		select {
		case <-l.sem:
		default:
		}
	}
	err = rdr.Err()
	if err == nil {
		err = io.EOF
	}
	end(err)
}

// joinAnswer joins the messages of one answer (PROTOCOL.md §6.1: the server
// sends an answer over 4 MiB in several) into one record, and releases them.
func joinAnswer(parts []arrow.RecordBatch, meta LookupMeta, mem memory.Allocator) (arrow.RecordBatch, error) {
	defer releaseAll(parts)
	var rec arrow.RecordBatch
	if len(parts) == 1 {
		rec = parts[0]
		rec.Retain()
	} else {
		cols := make([]arrow.Array, parts[0].NumCols())
		for c := range cols {
			arrs := make([]arrow.Array, len(parts))
			for i, p := range parts {
				arrs[i] = p.Column(c)
			}
			col, err := array.Concatenate(arrs, mem)
			if err != nil {
				releaseAll(cols[:c])
				return nil, status.Errorf(codes.Internal, "joining the %d messages of an answer: %v", len(parts), err)
			}
			cols[c] = col
		}
		rec = array.NewRecordBatch(parts[0].Schema(), cols, int64(cols[0].Len()))
		releaseAll(cols)
	}
	if rec.NumRows() != int64(meta.Rows) {
		rec.Release()
		return nil, status.Errorf(codes.Internal, "the answer's %d messages hold %d rows; its app_metadata says %d", len(parts), rec.NumRows(), meta.Rows)
	}
	return rec, nil
}

// releaseAll releases each of values.
func releaseAll[T interface{ Release() }](values []T) {
	for _, v := range values {
		v.Release()
	}
}

// LookupInline looks up a small set of keys through GetFlightInfo with CMD
// {"lookup": {..., "keys": keys}} and DoGet of its endpoint (PROTOCOL.md
// §6.3): the same answer as a streamed lookup of one batch holding keys, with
// _key_index indexing keys. Key values are JSON scalars coerced to the
// columns' types as in predicates (§4.4). The caller releases the table.
func (c *Client) LookupInline(ctx context.Context, req LookupRequest, keys []map[string]any) (arrow.Table, error) {
	if req.Table == "" {
		return nil, errors.New("lookup: no table")
	}
	req.Keys = keys
	if keys == nil {
		req.Keys = []map[string]any{} // an inline lookup without keys still names "keys"
	}
	cmd, err := json.Marshal(protocol.Command{Lookup: &req})
	if err != nil {
		return nil, fmt.Errorf("lookup %s: %w", req.Table, err)
	}
	tbl, err := c.lookupInline(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		return nil, fmt.Errorf("lookup %s: %w", req.Table, err)
	}
	return tbl, nil
}

func (c *Client) lookupInline(ctx context.Context, desc *flight.FlightDescriptor) (arrow.Table, error) {
	info, err := c.fc.GetFlightInfo(ctx, desc)
	if err != nil {
		return nil, err
	}
	var schema *arrow.Schema
	if len(info.Schema) > 0 {
		if schema, err = flight.DeserializeSchema(info.Schema, c.mem); err != nil {
			return nil, fmt.Errorf("FlightInfo schema: %w", err)
		}
	}
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, ep := range info.Endpoint {
		if ep.GetTicket() == nil {
			return nil, errors.New("FlightInfo endpoint without a ticket")
		}
		got, sc, err := c.readAllTicket(ctx, ep.Ticket)
		recs = append(recs, got...)
		if err != nil {
			return nil, err
		}
		if schema == nil {
			schema = sc
		}
	}
	if len(recs) > 0 {
		schema = recs[0].Schema()
	}
	if schema == nil {
		return nil, errors.New("the server sent no schema")
	}
	return array.NewTableFromRecords(schema, recs), nil
}

// readAllTicket reads every batch of a ticket.
func (c *Client) readAllTicket(ctx context.Context, tk *flight.Ticket) ([]arrow.RecordBatch, *arrow.Schema, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	get, err := c.fc.DoGet(sctx, tk)
	if err != nil {
		return nil, nil, err
	}
	rdr, err := flight.NewRecordReader(get, ipc.WithAllocator(c.mem))
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	defer rdr.Release()
	var recs []arrow.RecordBatch
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	return recs, rdr.Schema(), rdr.Err()
}
