package client

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
	"github.com/fluxgate-io/fluxgate/internal/prefetch"
)

// batchMessages reads a DoGet stream as IPC messages for arrow-go's reader,
// keeping each one's app_metadata. It decompresses ZSTD and LZ4 batches
// itself (ipcmsg): in parallel by buffer, with one shared ZSTD decoder,
// where arrow-go's reader builds a streaming decoder for each batch and
// decompresses several times slower. From the first compressed batch on,
// the next batch is received and decompressed while the last one is read;
// until then, messages pass as they are, on the reader's goroutine.
type batchMessages struct {
	src     flight.FlightService_DoGetClient
	ahead   *prefetch.Pipeline[received] // once pipelining: the messages received, in order
	msg     *ipc.Message                 // the last message handed out, held until the next
	appMeta []byte                       // its app_metadata
}

type received struct {
	fd   *flight.FlightData
	body *memory.Buffer // decompressed, if fd was a compressed batch
	err  error
}

func newBatchMessages(src flight.FlightService_DoGetClient) *batchMessages {
	return &batchMessages{src: src}
}

// Message implements ipc.MessageReader.
func (m *batchMessages) Message() (*ipc.Message, error) {
	if m.msg != nil {
		m.msg.Release()
		m.msg, m.appMeta = nil, nil
	}
	r := m.next()
	if r.err != nil {
		return nil, r.err
	}
	body := r.body
	if body == nil {
		body = memory.NewBufferBytes(r.fd.DataBody)
	}
	m.msg = ipc.NewMessage(memory.NewBufferBytes(r.fd.DataHeader), body)
	body.Release() // the message holds it, and the arrays made of it
	m.appMeta = r.fd.AppMetadata
	return m.msg, nil
}

func (m *batchMessages) next() received {
	if m.ahead == nil {
		fd, err := m.src.Recv()
		if err != nil {
			return received{err: err}
		}
		rb := compressedBatch(fd)
		if rb == nil {
			return received{fd: fd}
		}
		// Not the stream's context: gRPC cancels it once the stream ended,
		// while batches received before may still wait to be read.
		m.ahead = prefetch.Start(context.Background(), prefetch.Config[received]{Ahead: batchesAhead, Parallel: true}, m.receive)
		return decompress(fd, rb)
	}
	r, err := m.ahead.Next()
	if err != nil {
		return received{err: err} // io.EOF after the stream's end
	}
	return r
}

// batchesAhead is how many batches may be received and decompressing ahead
// of the one read.
const batchesAhead = 1

// receive receives the stream's messages, each decompressed on a goroutine
// of its own if it is compressed.
func (m *batchMessages) receive(ctx context.Context, emit func(prefetch.Work[received]) bool) error {
	for {
		fd, err := m.src.Recv()
		if err != nil {
			return err
		}
		work := func() (received, error) { return received{fd: fd}, nil }
		if rb := compressedBatch(fd); rb != nil {
			work = func() (received, error) { return decompress(fd, rb), nil }
		}
		if !emit(work) {
			return nil
		}
	}
}

func (m *batchMessages) Retain()  {}
func (m *batchMessages) Release() {}

// close stops the receiving goroutine and lets go of the last message; the
// stream's context must be cancelled first, to end a receive it waits in.
func (m *batchMessages) close() {
	if m.ahead != nil {
		m.ahead.Close()
	}
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
}

// compressedBatch returns the metadata of fd if it is a batch compressed
// with ZSTD or LZ4 frames.
func compressedBatch(fd *flight.FlightData) *ipcmsg.RecordBatch {
	if c := ipcmsg.CodecOf(fd.DataHeader); len(fd.DataBody) == 0 || c != ipcmsg.CodecZstd && c != ipcmsg.CodecLZ4Frame {
		return nil
	}
	rb, err := ipcmsg.Parse(fd.DataHeader)
	if err != nil {
		return nil // arrow-go reads it, or says what is wrong with it
	}
	return rb
}

func decompress(fd *flight.FlightData, rb *ipcmsg.RecordBatch) received {
	out, body, err := rb.Decompress(fd.DataBody, bodies)
	if err != nil {
		return received{err: fmt.Errorf("read ticket: %w", err)}
	}
	fd.DataHeader = out.Marshal()
	return received{fd: fd, body: body}
}

// bodies allocates decompressed batch bodies from Go's heap, never recycled:
// arrow-go's String.Value and Binary.Value alias the body, and callers keep
// such values after releasing the record, as they may with Go memory. (A
// pool that handed bodies out again once released corrupted those values.)
var bodies = memory.NewGoAllocator()
