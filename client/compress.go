package client

// A Writer's compressed batches are compressed here rather than by arrow-go's
// IPC writer, the way the server's log compresses them, each Arrow buffer on
// its own and the buffers of a batch in parallel: ZSTD at level 1, and a
// buffer that level 1 leaves as large as it was once more at level 7 (the
// offsets of string columns); LZ4 as one LZ4 frame per buffer. A log table
// of the codec stores such a batch as received (PROTOCOL.md §5), so this is
// the table's compression too. arrow-go's writer compresses ZSTD at its
// default level (3) and never retries: several times the CPU of level 1 for
// more bytes stored (docs/benchmarks.md, "Compression level").

import (
	"bytes"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/klauspost/compress/zstd"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
	"github.com/fluxgate-io/fluxgate/internal/parallel"
)

var (
	zstdFast   = newZstdEncoder(zstd.SpeedFastest)
	zstdBetter = newZstdEncoder(zstd.SpeedBetterCompression)
)

func newZstdEncoder(level zstd.EncoderLevel) *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false))
	if err != nil {
		panic(err) // the options above are valid
	}
	return e
}

// compressingSender is the payload writer of an IPC writer that sends a
// write stream's messages, its record batches compressed with codec.
type compressingSender struct {
	stream flight.FlightService_DoPutClient
	desc   *flight.FlightDescriptor // sent with the first message
	codec  ipcmsg.Codec
}

func (s *compressingSender) Start() error { return nil }
func (s *compressingSender) Close() error { return nil }

func (s *compressingSender) WritePayload(p ipc.Payload) error {
	meta := p.Meta()
	defer meta.Release()
	fd := &flight.FlightData{FlightDescriptor: s.desc, DataHeader: bytes.Clone(meta.Bytes())}
	s.desc = nil
	rb, err := ipcmsg.Parse(fd.DataHeader)
	var body *bytes.Buffer
	if err == nil {
		// Sized once: grown by doubling, the body was copied and zeroed
		// several times over (docs/benchmarks.md, "Peer: NATS JetStream").
		body = bytes.NewBuffer(make([]byte, 0, rb.BodyLength))
	} else {
		body = new(bytes.Buffer) // the schema
	}
	if err := p.SerializeBody(body); err != nil {
		return err
	}
	fd.DataBody = body.Bytes()
	if rb != nil && rb.Codec == ipcmsg.CodecNone {
		fd.DataHeader, fd.DataBody = compressBatch(rb, fd.DataBody, s.codec)
	}
	return s.stream.Send(fd)
}

// compressBatch returns the metadata and body of an uncompressed record
// batch with its buffers compressed with codec (ZSTD or LZ4 frames); a
// buffer that compression does not make smaller stays as it is.
func compressBatch(rb *ipcmsg.RecordBatch, body []byte, codec ipcmsg.Codec) (meta, out []byte) {
	packed := make([][]byte, len(rb.Buffers))
	compress := func(i int) {
		b := rb.Buffers[i]
		if b.Length == 0 {
			return
		}
		src := body[b.Offset : b.Offset+b.Length]
		var z []byte
		if codec == ipcmsg.CodecLZ4Frame {
			z = ipcmsg.AppendLZ4Frame(nil, src)
		} else if z = zstdFast.EncodeAll(src, nil); len(z) >= len(src) {
			z = zstdBetter.EncodeAll(src, z[:0])
		}
		if len(z) < len(src) {
			packed[i] = z
		}
	}
	if len(body) >= parallelCompressBytes {
		parallel.For(len(rb.Buffers), compress)
	} else {
		for i := range rb.Buffers {
			compress(i)
		}
	}
	layout, pieces := rb.Compress(body, codec, packed)
	return layout.Marshal(), bytes.Join(pieces, nil)
}

// parallelCompressBytes is the body size from which a batch's buffers are
// compressed in parallel.
const parallelCompressBytes = 256 << 10
