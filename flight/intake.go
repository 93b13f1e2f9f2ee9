package flight

// The intake is where a client's record stream (DoPut, DoExchange) enters the
// server, and the one place that decides what of it may go further:
//   - a message is received only once its bytes are held against the write
//     budget (DoPut), so received-but-unacknowledged bytes never exceed it;
//   - a message over the message limit, or a compressed body that claims to
//     decompress to more than it, is refused before arrow-go's reader
//     allocates what the claim says;
//   - a decoded batch is fully validated (arrow-go's ValidateFull: offsets,
//     validity bitmaps, null counts, buffer sizes), so a malformed one is
//     INVALID_ARGUMENT naming its column, and nothing of it is applied;
//   - a batch compressed with ZSTD or LZ4 frames is decompressed here
//     (ipcmsg, checking that every buffer decompresses to the length it
//     claims, and that an LZ4 buffer is one frame every Arrow reader takes),
//     and kept as received beside the decoded batch, so that a table of its
//     codec stores its buffers without compressing them again (Received);
//     a buffer that fails is INVALID_ARGUMENT naming its batch and column.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
)

// intake reads the checked batches of a client's record stream.
type intake struct {
	rpc     string
	r       *intakeReader
	src     *intakeSource
	batches int   // batches read so far
	err     error // a batch that failed validation
	recv    *engine.Received
}

// openIntake reads the first message of a client's record stream: it must
// carry the descriptor and the schema. A non-nil budget holds every message
// received from the moment it is received (see Take).
func (s *Service) openIntake(rpc string, stream clientStream, budget *byteBudget) (*intake, error) {
	var src flight.DataStreamReader = stream
	if s.limits.StreamIdleTimeout > 0 {
		src = newIdleReader(rpc, stream, s.limits.StreamIdleTimeout)
	}
	in := &intake{rpc: rpc, src: &intakeSource{rpc: rpc, ctx: stream.Context(), src: src, limit: int64(s.limits.MaxMessageBytes), budget: budget}}
	if budget != nil {
		in.src.reserve = budget.capped(receiveFactor * in.src.limit)
	}
	r, err := newIntakeReader(in.src, ipc.WithAllocator(s.mem))
	if err != nil {
		in.src.releaseHeld()
		return nil, openErr(rpc, err)
	}
	in.r = r
	in.src.columns = r.Schema()
	for _, f := range r.Schema().Fields() {
		if hasDictionary(f.Type) {
			in.Release()
			return nil, errs.New(errs.InvalidArgument, "%s: column %s is dictionary-encoded; send its values (PROTOCOL.md §2)", rpc, errs.Quote(f.Name))
		}
	}
	return in, nil
}

// Next reads the next batch and validates it; it returns false at the end of
// the stream or on an error (Err).
func (in *intake) Next() bool {
	in.recv = nil // not kept while the next batch is awaited
	if in.err != nil || !in.r.Next() {
		return false
	}
	if err := validate(in.r.RecordBatch()); err != nil {
		in.err = errs.New(errs.InvalidArgument, "%s: batch %d is malformed: %w", in.rpc, in.batches, err)
		return false
	}
	if z := in.src.compressed; z.meta != nil {
		in.recv = engine.NewReceived(in.r.Schema(), z.meta, z.body)
	}
	in.batches++
	return true
}

// Batch is the batch Next read; it is valid until the next call to Next.
func (in *intake) Batch() arrow.RecordBatch { return in.r.RecordBatch() }

// Received is the batch Next read as it was received, if it came
// compressed (else nil).
func (in *intake) Received() *engine.Received { return in.recv }

// Take hands the caller the budget bytes of the batch Next read; the caller
// releases them once the batch is acknowledged.
func (in *intake) Take() int64 {
	n := in.src.held
	in.src.held = 0
	return n
}

// Descriptor is the descriptor of the stream's first message.
func (in *intake) Descriptor() *flight.FlightDescriptor { return in.r.LatestFlightDescriptor() }

// Err is the error that ended the stream, nil at its end.
func (in *intake) Err() error {
	if in.err != nil {
		return in.err
	}
	return streamErr(in.rpc, in.r)
}

// Release frees the reader and the budget bytes not taken.
func (in *intake) Release() {
	in.r.Release()
	in.src.releaseHeld()
}

// validate checks every column of rec in full, as arrow-go's
// ValidateRecordFull does, except that a panic of arrow-go's checks (some
// corrupt layouts, such as an offset past the data before a smaller one,
// make them index out of range) is a verdict on that column too.
func validate(rec arrow.RecordBatch) error {
	for i, col := range rec.Columns() {
		if err := validateColumn(col); err != nil {
			return fmt.Errorf("column %d (%s): %w", i, rec.Schema().Field(i).Name, err)
		}
	}
	return nil
}

func validateColumn(col arrow.Array) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("arrow-go's validation failed: %v", p)
		}
	}()
	return array.ValidateFull(col)
}

// openErr is the error of a stream whose first message could not be read.
func openErr(rpc string, err error) error {
	switch {
	case errs.KindOf(err) != errs.Internal: // the intake's own, or the idle timeout
		return err
	case errors.Is(err, io.EOF):
		return errs.New(errs.InvalidArgument, "%s: the stream ended before a schema was sent", rpc)
	}
	if _, ok := grpcStatus(err); ok {
		return err
	}
	return errs.New(errs.InvalidArgument, "%s: the first message must carry the descriptor and an Arrow schema: %v", rpc, err)
}

func hasDictionary(dt arrow.DataType) bool {
	if dt.ID() == arrow.DICTIONARY {
		return true
	}
	if n, ok := dt.(arrow.NestedType); ok {
		for _, f := range n.Fields() {
			if hasDictionary(f.Type) {
				return true
			}
		}
	}
	return false
}

// intakeSource receives a client's messages for the intake's reader. gRPC
// materializes a message in Recv, before anyone sees its size, so a budgeted
// stream reserves what receiving the largest message it may receive holds
// (receiveFactor times the message limit, or the whole budget if smaller)
// before each Recv, and keeps of it what the message turned out to hold.
type intakeSource struct {
	rpc     string
	ctx     context.Context
	src     flight.DataStreamReader
	limit   int64       // the message limit
	budget  *byteBudget // nil: not budgeted
	reserve int64       // held before each Recv
	held    int64       // of messages received and not yet taken
	schema  bool        // whether the schema message has come
	// What errors name: the stream's schema, once read, and the record
	// batches received.
	columns *arrow.Schema
	batches int
	// compressed is the last batch, if it came compressed.
	compressed struct {
		meta *ipcmsg.RecordBatch
		body []byte
	}
}

func (s *intakeSource) Recv() (*flight.FlightData, error) {
	// What was not taken, the schema message, is decoded and no longer held;
	// holding it would keep this stream's next reservation from fitting a
	// budget no larger than one message. Nor is the last compressed batch
	// kept while the next is awaited.
	s.releaseHeld()
	s.compressed.meta, s.compressed.body = nil, nil
	if err := s.acquire(); err != nil {
		return nil, err
	}
	msg, err := s.src.Recv()
	var size int64
	var rb *ipcmsg.RecordBatch
	if err == nil {
		size, rb, err = s.measure(msg)
	}
	if err == nil && rb != nil {
		msg, err = s.decompress(msg, rb)
	}
	if err != nil {
		s.release(s.reserve)
		return nil, err
	}
	keep := min(size, s.reserve)
	s.release(s.reserve - keep)
	s.held += keep
	if rb != nil {
		s.batches++
	}
	return msg, nil
}

func (s *intakeSource) acquire() error {
	if s.budget == nil {
		return nil
	}
	if err := s.budget.acquire(s.ctx, s.reserve); err != nil {
		return status.FromContextError(err).Err()
	}
	return nil
}

func (s *intakeSource) release(n int64) {
	if s.budget != nil && n > 0 {
		s.budget.release(n)
	}
}

func (s *intakeSource) releaseHeld() {
	s.release(s.held)
	s.held = 0
}

// decompress keeps a batch as received if it is compressed and returns the
// message to decode: that batch decompressed, or msg.
func (s *intakeSource) decompress(msg *flight.FlightData, rb *ipcmsg.RecordBatch) (*flight.FlightData, error) {
	s.compressed.meta, s.compressed.body = nil, nil
	if rb.Codec == ipcmsg.CodecNone {
		return msg, nil
	}
	// Go memory, as received messages are: the decoded arrays may be kept
	// (Arrow's String.Value aliases the body) after the batch is released.
	out, body, err := rb.Decompress(msg.DataBody, memory.DefaultAllocator)
	if err != nil {
		return nil, s.malformed(rb, err)
	}
	s.compressed.meta, s.compressed.body = rb, msg.DataBody
	return &flight.FlightData{
		FlightDescriptor: msg.FlightDescriptor, AppMetadata: msg.AppMetadata,
		DataHeader: out.Marshal(), DataBody: body.Bytes()[:out.BodyLength],
	}, nil
}

// measure returns the bytes msg holds in memory once decoded: its size, plus
// what its compressed body decompresses to (the batch is kept as received
// too); and, for a record batch, its metadata.
func (s *intakeSource) measure(msg *flight.FlightData) (int64, *ipcmsg.RecordBatch, error) {
	size := int64(proto.Size(msg))
	if size > s.limit {
		return 0, nil, errs.New(errs.ResourceExhausted, "%s: a message of %d bytes is over the message limit of %d", s.rpc, size, s.limit)
	}
	if len(msg.DataHeader) == 0 {
		return size, nil, nil // a descriptor or app_metadata alone (pyarrow's do_exchange opens with one)
	}
	if !s.schema {
		s.schema = true
		return size, nil, nil // the first message with a header is the schema; the reader checks it
	}
	// Every later message must be a record batch whose metadata parses with
	// bounds checks (arrow-go's reader has none) and whose buffers lie in
	// its body, so that the reader sees the claims checked here.
	rb, err := ipcmsg.Parse(msg.DataHeader)
	if err != nil {
		return 0, nil, errs.New(errs.InvalidArgument, "%s: malformed batch metadata: %w", s.rpc, err)
	}
	if int64(len(msg.DataBody)) < rb.BodyLength {
		return 0, nil, errs.New(errs.InvalidArgument, "%s: a batch body of %d bytes, its metadata says %d", s.rpc, len(msg.DataBody), rb.BodyLength)
	}
	if rb.Codec == ipcmsg.CodecNone {
		return size, rb, nil
	}
	n, err := rb.UncompressedBytes(msg.DataBody)
	if err != nil {
		return 0, nil, s.malformed(rb, err)
	}
	if n > s.limit {
		return 0, nil, errs.New(errs.InvalidArgument, "%s: a compressed batch claims %d bytes once decompressed, over the message limit of %d", s.rpc, n, s.limit)
	}
	return size + n, rb, nil
}

// malformed is the refusal of the compressed batch rb, which fails to
// decompress with err: it names the batch and, when a buffer is at fault,
// its column.
func (s *intakeSource) malformed(rb *ipcmsg.RecordBatch, err error) error {
	var be *ipcmsg.BufferError
	if errors.As(err, &be) && s.columns != nil {
		if c, ok := ipcmsg.ColumnOfBuffer(s.columns, rb, be.Buffer); ok {
			return errs.New(errs.InvalidArgument, "%s: compressed batch %d is malformed: column %d (%s): %w", s.rpc, s.batches, c, s.columns.Field(c).Name, err)
		}
	}
	return errs.New(errs.InvalidArgument, "%s: compressed batch %d is malformed: %w", s.rpc, s.batches, err)
}
