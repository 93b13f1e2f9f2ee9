package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// RecordStream is what TicketStream and Scanner have in common: record batches with
// the offsets they carry. Both are also array.RecordReaders.
type RecordStream interface {
	array.RecordReader
	// Meta is the app_metadata of the current batch.
	Meta() BatchMeta
}

var (
	_ RecordStream = (*TicketStream)(nil)
	_ RecordStream = (*Scanner)(nil)
)

// ScanPlan is a planned scan: the FlightInfo of PROTOCOL.md §4.3.
type ScanPlan struct {
	// Schema is the result schema.
	Schema *arrow.Schema
	// Endpoints hold one ticket per bucket (one in all with a limit).
	Endpoints []Endpoint
	// TotalRecords is the number of rows when the server knows it, else -1.
	TotalRecords int64
	// Meta is the FlightInfo's app_metadata.
	Meta PlanMeta
	// Info is the FlightInfo as received.
	Info *flight.FlightInfo
}

// Endpoint is one ticket of a plan.
type Endpoint struct {
	// Ticket is redeemed with ReadTicket.
	Ticket []byte
	// Decoded is the ticket's JSON (PROTOCOL.md §4.3), nil if it is not JSON.
	Decoded *Ticket
}

// Plan plans a scan: GetFlightInfo with CMD {"scan": req}.
func (c *Client) Plan(ctx context.Context, req ScanRequest) (*ScanPlan, error) {
	if req.Table == "" {
		return nil, errors.New("scan: no table")
	}
	cmd, err := json.Marshal(map[string]ScanRequest{"scan": req})
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", req.Table, err)
	}
	plan, err := c.PlanDescriptor(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", req.Table, err)
	}
	return plan, nil
}

// PlanDescriptor plans a scan from any descriptor, for instance
// PATH [database, table], the default scan of a table.
func (c *Client) PlanDescriptor(ctx context.Context, desc *flight.FlightDescriptor) (*ScanPlan, error) {
	info, err := c.fc.GetFlightInfo(ctx, desc)
	if err != nil {
		return nil, err
	}
	return parseFlightInfo(info, c.mem)
}

// PlanTable plans the default scan of a table through a PATH descriptor.
func (c *Client) PlanTable(ctx context.Context, table string) (*ScanPlan, error) {
	plan, err := c.PlanDescriptor(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: tablePath(table)})
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", table, err)
	}
	return plan, nil
}

func parseFlightInfo(info *flight.FlightInfo, mem memory.Allocator) (*ScanPlan, error) {
	plan := &ScanPlan{Info: info, TotalRecords: info.TotalRecords}
	if len(info.Schema) > 0 {
		sc, err := flight.DeserializeSchema(info.Schema, mem)
		if err != nil {
			return nil, fmt.Errorf("FlightInfo schema: %w", err)
		}
		plan.Schema = sc
	}
	if len(info.AppMetadata) > 0 {
		if err := json.Unmarshal(info.AppMetadata, &plan.Meta); err != nil {
			return nil, fmt.Errorf("FlightInfo app_metadata %q: %w", truncate(info.AppMetadata), err)
		}
	}
	for _, ep := range info.Endpoint {
		if ep.GetTicket() == nil {
			return nil, errors.New("FlightInfo endpoint without a ticket")
		}
		e := Endpoint{Ticket: ep.Ticket.Ticket}
		if t, err := ParseTicket(e.Ticket); err == nil {
			e.Decoded = &t
		}
		plan.Endpoints = append(plan.Endpoints, e)
	}
	return plan, nil
}

// ReadTicket redeems a ticket (DoGet). The returned TicketStream must be released;
// releasing it early cancels the call. When the server ends the stream
// because its reader took nothing for the server's idle timeout (the reader
// stopped calling Next), the TicketStream opens the read again after the last
// batch it returned (protocol.ResumeTicket), so no batch comes twice or is
// missed; where it cannot (inside a snapshot) Err says so.
func (c *Client) ReadTicket(ctx context.Context, ticket []byte) (*TicketStream, error) {
	sctx, cancel := context.WithCancel(ctx)
	s := &TicketStream{ctx: sctx, cancel: cancel, fc: c.fc, mem: c.mem, ticket: ticket}
	if err := s.call(ticket); err != nil {
		cancel()
		return nil, fmt.Errorf("read ticket: %w", err)
	}
	s.refs.Store(1)
	return s, nil
}

// TicketStream is the record batches of one ticket. Like every arrow RecordReader,
// the current record is valid until the next call to Next; Retain it to keep
// it longer. An unbounded stream ends only when its context is cancelled or
// the TicketStream is released.
type TicketStream struct {
	ctx    context.Context // the calls'
	cancel context.CancelFunc
	fc     flight.FlightServiceClient
	mem    memory.Allocator
	refs   atomic.Int64
	ticket []byte // what the stream reads: the ticket as resumed

	get    flight.FlightService_DoGetClient // the call reading it now
	msgs   *batchMessages
	rdr    *ipc.Reader
	opened bool
	done   bool
	err    error
	meta   BatchMeta
	// What Next returned since the ticket (as resumed) was redeemed: the
	// rows of its batches, and whether meta is one of them.
	rows int64
	read bool
}

// call redeems ticket, for the batches from the next Next on.
func (s *TicketStream) call(ticket []byte) error {
	get, err := s.fc.DoGet(s.ctx, &flight.Ticket{Ticket: ticket})
	if err != nil {
		return err
	}
	s.get, s.ticket, s.rows, s.read = get, ticket, 0, false
	return nil
}

// open reads the stream's first message (the IPC reader blocks until it
// arrives).
func (s *TicketStream) open() bool {
	if s.opened {
		return s.rdr != nil
	}
	s.opened = true
	s.msgs = newBatchMessages(s.get)
	rdr, err := ipc.NewReaderFromMessageReader(s.msgs, ipc.WithAllocator(s.mem))
	if err != nil {
		s.done = true
		if !errors.Is(err, io.EOF) {
			s.err = fmt.Errorf("read ticket: %w", err)
		}
		return false
	}
	s.rdr = rdr
	return true
}

// Schema returns the stream's schema, waiting for the first message if need
// be; nil if the stream failed (see Err) or ended before sending one.
func (s *TicketStream) Schema() *arrow.Schema {
	if !s.open() {
		return nil
	}
	return s.rdr.Schema()
}

// Next advances to the next batch. Batches with no rows may come: they only
// advance Meta().Next.
func (s *TicketStream) Next() bool {
	for !s.done && s.open() {
		if s.rdr.Next() {
			meta, _, err := ParseBatchMeta(s.msgs.appMeta)
			if err != nil {
				s.done, s.err = true, err
				return false
			}
			s.meta, s.read = meta, true
			s.rows += s.rdr.RecordBatch().NumRows()
			return true
		}
		s.done = true
		if err := s.rdr.Err(); err != nil {
			s.err = s.resume(err)
		}
	}
	return false
}

// resume opens the read again after the batches Next returned, when the
// server ended the stream for its idle timeout; it returns the error that
// ends the stream instead, if any.
func (s *TicketStream) resume(ended error) error {
	ended = fmt.Errorf("read ticket: %w", ended)
	if !endedIdle(ended) {
		return ended
	}
	tk, err := ParseTicket(s.ticket)
	if err != nil {
		return fmt.Errorf("%w; not resumed: %v", ended, err)
	}
	var last *BatchMeta
	if s.read {
		last = &s.meta
	}
	rest, more, err := protocol.ResumeTicket(tk, last, s.rows)
	if err != nil {
		return fmt.Errorf("%w; not resumed: %v", ended, err)
	}
	if !more {
		return nil
	}
	ticket, err := rest.Encode()
	if err == nil {
		s.closeCall()
		err = s.call(ticket)
	}
	if err != nil {
		return fmt.Errorf("%w; resuming: %w", ended, err)
	}
	s.opened, s.done = false, false
	return nil
}

// endedIdle reports whether err is the status of a stream the server ended
// because its reader took nothing for the idle timeout (PROTOCOL.md §1,
// Limits).
func endedIdle(err error) bool {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.ResourceExhausted {
		return false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Domain == protocol.ErrorDomain && info.Reason == protocol.ReasonStreamIdle {
			return true
		}
	}
	return false
}

// closeCall frees what the call read.
func (s *TicketStream) closeCall() {
	if s.msgs != nil {
		s.msgs.close()
		s.msgs = nil
	}
	if s.rdr != nil {
		s.rdr.Release()
		s.rdr = nil
	}
}

// RecordBatch returns the current batch.
func (s *TicketStream) RecordBatch() arrow.RecordBatch {
	if s.rdr == nil {
		return nil
	}
	return s.rdr.RecordBatch()
}

// Record returns the current batch.
//
// Deprecated: use RecordBatch, as arrow does.
func (s *TicketStream) Record() arrow.RecordBatch { return s.RecordBatch() }

// Meta returns the current batch's app_metadata.
func (s *TicketStream) Meta() BatchMeta { return s.meta }

// Err returns the error that ended the stream, nil at a clean end.
func (s *TicketStream) Err() error { return s.err }

// Retain adds a reference.
func (s *TicketStream) Retain() { s.refs.Add(1) }

// Release drops a reference; the last one cancels the call and frees the
// current batch.
func (s *TicketStream) Release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	s.cancel()
	s.closeCall()
	s.done = true
}

// ScanOption configures Scan.
type ScanOption func(*scanOptions)

type scanOptions struct {
	concurrency int
	discovery   time.Duration
}

// WithConcurrency reads at most n endpoints of a bounded scan at a time
// (default: all). Unbounded scans read every endpoint at once.
func WithConcurrency(n int) ScanOption { return func(o *scanOptions) { o.concurrency = n } }

// DefaultPartitionDiscovery is how often an unbounded scan of a partitioned
// table looks for new partitions, as Fluss's
// scan.partition.discovery.interval.
const DefaultPartitionDiscovery = time.Minute

// WithPartitionDiscovery sets how often an unbounded scan of all of a
// partitioned table's partitions looks for partitions created since it
// started (default DefaultPartitionDiscovery).
func WithPartitionDiscovery(d time.Duration) ScanOption {
	return func(o *scanOptions) { o.discovery = d }
}

// Scan plans req and reads all its endpoints concurrently, yielding their
// batches as they arrive: in order within a bucket, interleaved across
// buckets. With req.Stop set to Unbounded it streams until ctx is cancelled
// or the Scanner is released.
func (c *Client) Scan(ctx context.Context, req ScanRequest, opts ...ScanOption) (*Scanner, error) {
	plan, err := c.Plan(ctx, req)
	if err != nil {
		return nil, err
	}
	var o scanOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.concurrency <= 0 || req.Stop.IsUnbounded() {
		o.concurrency = len(plan.Endpoints)
	}
	s := c.scanPlan(ctx, req.Table, plan, o.concurrency)
	if req.Stop.IsUnbounded() && plan.Meta.Partitions != nil && len(req.Partitions) == 0 {
		if o.discovery <= 0 {
			o.discovery = DefaultPartitionDiscovery
		}
		s.discover(c, req, o.discovery)
	}
	return s, nil
}

// ScanPlanned reads the endpoints of a plan as Scan does.
func (c *Client) ScanPlanned(ctx context.Context, plan *ScanPlan) *Scanner {
	return c.scanPlan(ctx, "", plan, len(plan.Endpoints))
}

func (c *Client) scanPlan(ctx context.Context, table string, plan *ScanPlan, concurrency int) *Scanner {
	sctx, cancel := context.WithCancel(ctx)
	s := &Scanner{plan: plan, cancel: cancel, table: table, ch: make(chan scanItem, max(1, len(plan.Endpoints)))}
	s.refs.Store(1)
	sem := make(chan struct{}, max(1, concurrency))
	for _, ep := range plan.Endpoints {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-sctx.Done():
				s.fail(sctx.Err())
				return
			}
			s.readEndpoint(sctx, c, ep)
		}()
	}
	go func() {
		s.wg.Wait()
		close(s.ch)
	}()
	s.ctx = sctx
	return s
}

// startEndpoint reads one more endpoint, of a partition found after the scan
// started. The caller holds a count of s.wg, so Wait has not returned.
func (s *Scanner) startEndpoint(c *Client, ep Endpoint) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.readEndpoint(s.ctx, c, ep)
	}()
}

// Scanner merges the streams of all endpoints of a scan. The current record is
// valid until the next call to Next.
type Scanner struct {
	plan   *ScanPlan
	table  string
	ctx    context.Context // the reads'; cancelled by Release
	cancel context.CancelFunc
	ch     chan scanItem
	wg     sync.WaitGroup
	refs   atomic.Int64

	errMu sync.Mutex
	err   error

	cur  scanItem
	done bool
}

type scanItem struct {
	rec  arrow.RecordBatch
	meta BatchMeta
}

func (s *Scanner) readEndpoint(ctx context.Context, c *Client, ep Endpoint) {
	st, err := c.ReadTicket(ctx, ep.Ticket)
	if err != nil {
		s.fail(err)
		return
	}
	defer st.Release()
	for st.Next() {
		rec := st.RecordBatch()
		rec.Retain()
		select {
		case s.ch <- scanItem{rec: rec, meta: st.Meta()}:
		case <-ctx.Done():
			rec.Release()
			s.fail(ctx.Err())
			return
		}
	}
	if err := st.Err(); err != nil {
		s.fail(err)
	}
}

// fail records the first error and stops the other endpoints.
func (s *Scanner) fail(err error) {
	s.errMu.Lock()
	if s.err == nil {
		if s.table != "" {
			err = fmt.Errorf("scan %s: %w", s.table, err)
		}
		s.err = err
	}
	s.errMu.Unlock()
	s.cancel()
}

// Plan returns the scan's plan.
func (s *Scanner) Plan() *ScanPlan { return s.plan }

// Schema returns the result schema.
func (s *Scanner) Schema() *arrow.Schema { return s.plan.Schema }

// Next advances to the next batch of any endpoint.
func (s *Scanner) Next() bool {
	if s.cur.rec != nil {
		s.cur.rec.Release()
		s.cur = scanItem{}
	}
	if s.done {
		return false
	}
	item, ok := <-s.ch
	if !ok {
		s.done = true
		return false
	}
	s.cur = item
	return true
}

// RecordBatch returns the current batch.
func (s *Scanner) RecordBatch() arrow.RecordBatch { return s.cur.rec }

// Record returns the current batch.
//
// Deprecated: use RecordBatch, as arrow does.
func (s *Scanner) Record() arrow.RecordBatch { return s.cur.rec }

// Meta returns the current batch's app_metadata; Meta().Bucket tells which
// endpoint it came from.
func (s *Scanner) Meta() BatchMeta { return s.cur.meta }

// Err returns the first error of any endpoint, nil at a clean end.
func (s *Scanner) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Retain adds a reference.
func (s *Scanner) Retain() { s.refs.Add(1) }

// Release drops a reference; the last one cancels the reads that are still
// going and frees every batch.
func (s *Scanner) Release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	s.cancel()
	if s.cur.rec != nil {
		s.cur.rec.Release()
		s.cur = scanItem{}
	}
	for item := range s.ch {
		item.rec.Release()
	}
	s.done = true
}

// ReadAll reads a bounded scan into a table; the caller releases it.
func (c *Client) ReadAll(ctx context.Context, req ScanRequest) (arrow.Table, error) {
	if req.Stop.IsUnbounded() {
		return nil, fmt.Errorf("scan %s: ReadAll of an unbounded scan would never end", req.Table)
	}
	s, err := c.Scan(ctx, req)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for s.Next() {
		rec := s.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	schema := s.Schema()
	if len(recs) > 0 {
		schema = recs[0].Schema() // what the batches carry, in case it differs in metadata
	}
	if schema == nil {
		return nil, fmt.Errorf("scan %s: the server sent no schema", req.Table)
	}
	return array.NewTableFromRecords(schema, recs), nil
}
