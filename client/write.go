package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/util"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
)

// DefaultMaxBatchBytes is the size above which the Writer splits a record
// into slices: comfortably under gRPC's common 4 MiB message limit.
const DefaultMaxBatchBytes = 3584 << 10

// DefaultMaxInFlight is how many batches a Writer sends ahead of their
// acknowledgements by default.
const DefaultMaxInFlight = 16

// WriterOption configures NewWriter.
type WriterOption func(*Writer)

// WithMaxBatchBytes sets the estimated encoded size above which a record is
// split into slices (default DefaultMaxBatchBytes; a negative n never splits).
func WithMaxBatchBytes(n int64) WriterOption { return func(w *Writer) { w.maxBytes = n } }

// WithMaxInFlight sets how many batches may be sent and not yet acknowledged
// by the server before Send blocks (default DefaultMaxInFlight).
func WithMaxInFlight(n int) WriterOption {
	return func(w *Writer) {
		if n > 0 {
			w.maxInFlight = n
		}
	}
}

// WithWriteCompression compresses the IPC buffers sent: "lz4_frame" or
// "zstd" ("" or "none" for none). Without it, batches written to a log
// table compressed with ZSTD (the default) or LZ4 are sent compressed so,
// which the server stores as received (PROTOCOL.md §5), and other batches
// uncompressed.
func WithWriteCompression(codec string) WriterOption {
	return func(w *Writer) { w.compression, w.compressionSet = codec, true }
}

// Writer writes record batches to one table through one DoPut stream
// (PROTOCOL.md §5).
//
// Each batch sent is one atomic unit on the server: once its PutResult is
// back, all of its rows are applied and durable; if the stream fails, none of
// the unacknowledged batch is. A record larger than the writer's size limit
// is sent as several slices, and each slice is then its own atomic batch with
// its own sequence number, so a failure may leave a prefix of the record's
// slices applied.
//
// Write is the simple, synchronous form. For throughput, Send many records
// and collect their results with Recv or Flush: the server works on batches
// while later ones are in transit. Send, CloseSend and Close must be called
// from one goroutine; Recv may be called from another.
type Writer struct {
	c           *Client
	desc        *flight.FlightDescriptor
	stream      flight.FlightService_DoPutClient
	cancel      context.CancelFunc
	maxBytes    int64
	maxInFlight int
	compression string
	// compressionSet: WithWriteCompression was given; else the table's
	// codec decides.
	compressionSet bool

	// Used only by the sending goroutine.
	fw         *ipc.Writer
	schema     *arrow.Schema
	sendErr    error
	sendClosed bool
	sent       bool

	sem      chan struct{} // one token per batch sent and not yet acknowledged
	recvDone chan struct{} // closed when the receive loop ends

	mu struct {
		sync.Mutex
		cond    *sync.Cond
		acks    []ack // acknowledgements received, not yet handed out
		pending []int // slices per Send whose result is not yet handed out
		recvErr error // how the receive loop ended: io.EOF or the stream's error
		sendErr error // the sending side's sticky error, already wrapped
		closed  bool  // no more Sends
	}
}

type ack struct {
	res PutResult
	err error
}

// NewWriter opens a DoPut stream for req. Nothing is sent until the first
// record, whose schema fixes the stream's schema. A request with only Table
// set is sent as a PATH descriptor (the table's default mode), anything else
// as CMD {"write": req}.
func (c *Client) NewWriter(ctx context.Context, req WriteRequest, opts ...WriterOption) (*Writer, error) {
	if req.Table == "" {
		return nil, errors.New("write: no table")
	}
	desc, err := writeDescriptor(req)
	if err != nil {
		return nil, err
	}
	w := &Writer{c: c, desc: desc, maxBytes: DefaultMaxBatchBytes, maxInFlight: DefaultMaxInFlight}
	for _, o := range opts {
		o(w)
	}
	switch w.compression {
	case "", "none", "lz4_frame", "zstd":
	default:
		return nil, fmt.Errorf("write %s: unknown compression %q: want none, lz4_frame or zstd", req.Table, w.compression)
	}
	if !w.compressionSet {
		w.compression = c.storedAsSent(ctx, req.Table)
	}
	sctx, cancel := context.WithCancel(ctx)
	stream, err := c.fc.DoPut(sctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("write %s: %w", req.Table, err)
	}
	w.stream, w.cancel = stream, cancel
	w.sem = make(chan struct{}, w.maxInFlight)
	w.recvDone = make(chan struct{})
	w.mu.cond = sync.NewCond(&w.mu.Mutex)
	go w.receive()
	return w, nil
}

// storedAsSent returns the compression in which the server stores a batch
// of table as it is sent: the codec of a log table compressed with ZSTD or
// LZ4 frames, else "" (a table the caller may not describe included). The
// server compresses other tables itself, differently (changelogs of
// primary-key tables), so a batch compressed for them would be decompressed
// on arrival.
func (c *Client) storedAsSent(ctx context.Context, table string) string {
	info, err := c.DescribeTable(ctx, table)
	if err != nil || info.HasPrimaryKey() {
		return ""
	}
	codec, ok := info.Options[optCompressionType]
	switch {
	case !ok:
		return "zstd"
	case strings.EqualFold(codec, "zstd"), strings.EqualFold(codec, "lz4_frame"):
		return strings.ToLower(codec)
	}
	return ""
}

// optCompressionType is the table option of the log's compression; absent,
// it is ZSTD (PROTOCOL.md §3).
const optCompressionType = "table.log.arrow.compression.type"

// writeDescriptor returns the descriptor of a write: PATH for a plain write,
// CMD {"write": ...} otherwise.
func writeDescriptor(req WriteRequest) (*flight.FlightDescriptor, error) {
	if onlyTable(req) {
		return &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: tablePath(req.Table)}, nil
	}
	cmd, err := json.Marshal(map[string]WriteRequest{"write": req})
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", req.Table, err)
	}
	return &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd}, nil
}

// tablePath splits "db.t" into a descriptor path; "t" stays one element.
func tablePath(table string) []string {
	if db, t, ok := strings.Cut(table, "."); ok {
		return []string{db, t}
	}
	return []string{table}
}

// table returns the table being written, as the descriptor names it.
func (w *Writer) table() string {
	if w.desc.Type == flight.DescriptorPATH {
		return strings.Join(w.desc.Path, ".")
	}
	var cmd struct {
		Write WriteRequest `json:"write"`
	}
	_ = json.Unmarshal(w.desc.Cmd, &cmd)
	return cmd.Write.Table
}

// Write sends rec and waits for its result. It must not be used while results
// of earlier Sends are outstanding (collect them with Recv or Flush first).
func (w *Writer) Write(rec arrow.RecordBatch) (PutResult, error) {
	w.mu.Lock()
	outstanding := len(w.mu.pending)
	w.mu.Unlock()
	if outstanding > 0 {
		return PutResult{}, fmt.Errorf("write %s: Write with %d Send results outstanding; use Recv or Flush first", w.table(), outstanding)
	}
	if err := w.Send(rec); err != nil {
		return PutResult{}, err
	}
	return w.Recv()
}

// Send sends rec (as several slices if it is larger than the size limit)
// without waiting for its result; each Send has one result, returned by Recv
// or Flush in Send order. Send blocks while the in-flight limit is reached.
// The caller keeps ownership of rec.
func (w *Writer) Send(rec arrow.RecordBatch) error {
	if w.sendClosed {
		return fmt.Errorf("write %s: %w", w.table(), errStreamClosed)
	}
	if w.sendErr != nil {
		return w.sendErr
	}
	if w.fw == nil {
		w.schema = rec.Schema()
		opts := []ipc.Option{ipc.WithSchema(w.schema), ipc.WithAllocator(w.c.mem)}
		switch w.compression {
		case "lz4_frame":
			w.fw = ipc.NewWriterWithPayloadWriter(&compressingSender{stream: w.stream, desc: w.desc, codec: ipcmsg.CodecLZ4Frame}, opts...) // compress.go
		case "zstd":
			w.fw = ipc.NewWriterWithPayloadWriter(&compressingSender{stream: w.stream, desc: w.desc, codec: ipcmsg.CodecZstd}, opts...)
		default:
			fw := flight.NewRecordWriter(w.stream, opts...)
			fw.SetFlightDescriptor(w.desc)
			w.fw = fw.Writer
		}
	} else if !w.schema.Equal(rec.Schema()) {
		return fmt.Errorf("write %s: record schema %s differs from the stream's schema %s", w.table(), rec.Schema(), w.schema)
	}
	slices := splitRecord(rec, w.maxBytes)
	defer func() {
		for _, s := range slices {
			if s != rec {
				s.Release()
			}
		}
	}()
	w.mu.Lock()
	w.mu.pending = append(w.mu.pending, len(slices))
	w.mu.Unlock()
	for _, s := range slices {
		select {
		case w.sem <- struct{}{}:
		case <-w.recvDone:
			return w.failSend(io.EOF)
		}
		w.sent = true
		if err := w.fw.Write(s); err != nil {
			return w.failSend(err)
		}
	}
	return nil
}

// failSend makes a send error sticky and ends the stream. io.EOF from gRPC
// means the server ended the stream: its status is what the receive side got.
func (w *Writer) failSend(err error) error {
	if errors.Is(err, io.EOF) {
		<-w.recvDone
		w.mu.Lock()
		err = w.mu.recvErr
		w.mu.Unlock()
		if errors.Is(err, io.EOF) {
			err = status.Error(codes.Unavailable, "the server closed the write stream")
		}
	}
	w.sendErr = fmt.Errorf("write %s: %w", w.table(), err)
	w.cancel()
	w.mu.Lock()
	w.mu.sendErr = w.sendErr
	w.mu.cond.Broadcast()
	w.mu.Unlock()
	return w.sendErr
}

// Recv returns the result of the oldest Send whose result has not been
// returned yet, waiting for it. After CloseSend, once every result has been
// returned, Recv returns io.EOF. Recv blocks while there is nothing pending
// and the writer is open.
func (w *Writer) Recv() (PutResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if len(w.mu.pending) > 0 {
			n := w.mu.pending[0]
			if len(w.mu.acks) >= n {
				var res PutResult
				var err error
				for _, a := range w.mu.acks[:n] {
					if a.err != nil && err == nil {
						err = a.err
					}
					res.merge(a.res)
				}
				w.mu.acks = w.mu.acks[n:]
				w.mu.pending = w.mu.pending[1:]
				if err != nil {
					return PutResult{}, fmt.Errorf("write %s: %w", w.table(), err)
				}
				return res, nil
			}
			if w.mu.sendErr != nil {
				return PutResult{}, w.mu.sendErr
			}
			if w.mu.recvErr != nil {
				err := w.mu.recvErr
				if errors.Is(err, io.EOF) {
					err = status.Errorf(codes.Internal, "the server ended the write stream with %d of %d results missing",
						n-len(w.mu.acks), n)
				}
				return PutResult{}, fmt.Errorf("write %s: %w", w.table(), err)
			}
		} else {
			if w.mu.sendErr != nil {
				return PutResult{}, w.mu.sendErr
			}
			if w.mu.recvErr != nil && !errors.Is(w.mu.recvErr, io.EOF) {
				return PutResult{}, fmt.Errorf("write %s: %w", w.table(), w.mu.recvErr)
			}
			if w.mu.closed || w.mu.recvErr != nil {
				return PutResult{}, io.EOF
			}
		}
		w.mu.cond.Wait()
	}
}

// Flush waits for the results of every Send not yet returned by Recv and
// returns them in Send order. On error it returns the results before it.
func (w *Writer) Flush() ([]PutResult, error) {
	var out []PutResult
	for {
		w.mu.Lock()
		n := len(w.mu.pending)
		w.mu.Unlock()
		if n == 0 {
			return out, nil
		}
		res, err := w.Recv()
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
}

// CloseSend ends the stream's send side; results still arrive through Recv.
func (w *Writer) CloseSend() error {
	if w.sendClosed {
		return nil
	}
	w.sendClosed = true
	w.mu.Lock()
	w.mu.closed = true
	w.mu.cond.Broadcast()
	w.mu.Unlock()
	if w.fw != nil {
		_ = w.fw.Close()
	}
	if !w.sent {
		// Nothing was written: end the call rather than send the server a
		// stream without a descriptor.
		w.cancel()
		return nil
	}
	if err := w.stream.CloseSend(); err != nil && w.sendErr == nil {
		return w.failSend(err)
	}
	return nil
}

// Close ends the stream, waits for the results of every Send and returns the
// first error of the stream, of a result not yet returned by Recv, or of a
// result that never came. Results not yet returned by Recv are discarded: use
// Flush first to have them.
func (w *Writer) Close() error {
	err := w.CloseSend()
	if !w.sent {
		<-w.recvDone
		return w.sendErr
	}
	for err == nil {
		if _, rerr := w.Recv(); rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				err = rerr
			}
			break
		}
	}
	if err == nil {
		<-w.recvDone
		w.mu.Lock()
		if rerr := w.mu.recvErr; !errors.Is(rerr, io.EOF) {
			err = fmt.Errorf("write %s: %w", w.table(), rerr)
		}
		w.mu.Unlock()
	}
	w.cancel()
	<-w.recvDone
	if err == nil {
		err = w.sendErr
	}
	return err
}

// receive collects the server's PutResults until the stream ends.
func (w *Writer) receive() {
	defer close(w.recvDone)
	for {
		pr, err := w.stream.Recv()
		w.mu.Lock()
		if err != nil {
			w.mu.recvErr = err
			w.mu.cond.Broadcast()
			w.mu.Unlock()
			return
		}
		res, perr := ParsePutResult(pr.AppMetadata)
		if perr != nil {
			perr = status.Error(codes.Internal, perr.Error())
		}
		w.mu.acks = append(w.mu.acks, ack{res: res, err: perr})
		w.mu.cond.Broadcast()
		w.mu.Unlock()
		select {
		case <-w.sem:
		default:
		}
	}
}

// splitRecord returns rec itself, or slices of it each estimated to encode
// within maxBytes.
func splitRecord(rec arrow.RecordBatch, maxBytes int64) []arrow.RecordBatch {
	rows := rec.NumRows()
	if maxBytes <= 0 || rows <= 1 {
		return []arrow.RecordBatch{rec}
	}
	size := util.TotalRecordSize(rec)
	if size <= maxBytes {
		return []arrow.RecordBatch{rec}
	}
	per := rows * maxBytes / size
	if per < 1 {
		per = 1
	}
	// Even out the slices: k slices of about rows/k rows.
	k := (rows + per - 1) / per
	per = (rows + k - 1) / k
	out := make([]arrow.RecordBatch, 0, k)
	for off := int64(0); off < rows; off += per {
		end := min(off+per, rows)
		out = append(out, rec.NewSlice(off, end))
	}
	return out
}
