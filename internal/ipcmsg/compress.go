package ipcmsg

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/zstd"

	"github.com/fluxgate-io/fluxgate/internal/parallel"
)

// zstdDecoder decodes into the room it is given and no more: without the
// cap limit, a frame header claiming terabytes made DecodeAll allocate them
// before decoding a byte (a 23-byte frame killed the server).
var zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true))

// decodeSlack is the spare room left after each decompressed buffer: with
// it the ZSTD decoder copies 16 bytes at a time, overrunning into the room,
// instead of byte by byte (about 10 % faster), and buffers decompress in
// parallel without writing into each other.
const decodeSlack = 16

// parallelBytes is the compressed body size from which buffers are
// decompressed on all cores.
const parallelBytes = 256 << 10

// maxBufferBytes bounds the uncompressed length a buffer may claim, so that
// a corrupt prefix fails instead of allocating without end.
const maxBufferBytes = 1 << 32

// Compress returns the metadata and body pieces of rb, an uncompressed
// message with body body, whose buffers are stored as packed says: packed[i]
// is buffer i compressed with codec (each buffer compressed on its own, as
// Arrow's BUFFER method says), or nil to store it as it is; a nil packed
// stores every buffer as it is. Pieces reference body and packed; nothing
// is copied.
func (rb *RecordBatch) Compress(body []byte, codec Codec, packed [][]byte) (*RecordBatch, [][]byte) {
	out := &RecordBatch{Length: rb.Length, Nodes: rb.Nodes, Codec: codec, Variadic: rb.Variadic}
	out.Buffers = make([]Buffer, len(rb.Buffers))
	// One allocation for the prefixes and padding.
	small := make([]byte, 0, 16*len(rb.Buffers))
	var pieces [][]byte
	pos := 0
	for i, b := range rb.Buffers {
		if b.Length == 0 {
			out.Buffers[i] = Buffer{Offset: int64(pos)}
			continue
		}
		var data []byte
		size := b.Length
		if packed != nil {
			data = packed[i]
		}
		if data == nil {
			data, size = body[b.Offset:b.Offset+b.Length], -1
		}
		small = binary.LittleEndian.AppendUint64(small, uint64(size))
		pieces = append(pieces, small[len(small)-8:], data)
		n := 8 + len(data)
		out.Buffers[i] = Buffer{Offset: int64(pos), Length: int64(n)}
		if pad := align8(n) - n; pad > 0 {
			small = append(small, make([]byte, pad)...)
			pieces = append(pieces, small[len(small)-pad:])
		}
		pos += align8(n)
	}
	out.BodyLength = int64(pos)
	return out, pieces
}

// UncompressedBytes returns the bytes the buffers of a compressed message
// say they decompress to: what a reader allocates for them, known before
// anything is allocated. body is the message body.
func (rb *RecordBatch) UncompressedBytes(body []byte) (int64, error) {
	if rb.Codec == CodecNone {
		return 0, fmt.Errorf("ipcmsg: the body is not compressed")
	}
	if int64(len(body)) < rb.BodyLength {
		return 0, fmt.Errorf("ipcmsg: body has %d bytes, the metadata says %d", len(body), rb.BodyLength)
	}
	var total int64
	for i := range rb.Buffers {
		n, err := rb.claim(body, i)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// claim returns the uncompressed length of buffer i of a compressed body
// (that Parse checked against the metadata): its prefix, or the rest of the
// buffer when it is stored as it is.
func (rb *RecordBatch) claim(body []byte, i int) (int64, error) {
	b := rb.Buffers[i]
	if b.Length == 0 {
		return 0, nil
	}
	switch n := le64(body[b.Offset:]); {
	case n == -1:
		return b.Length - 8, nil
	case n < 0 || n > maxBufferBytes:
		return 0, &BufferError{Buffer: i, Err: fmt.Errorf("claims %d uncompressed bytes", n)}
	default:
		return n, nil
	}
}

// Decompress returns the message's buffers decompressed into one allocation
// from mem, and the uncompressed metadata that describes them. body is the
// message body; rb must be compressed with ZSTD or LZ4 frames.
func (rb *RecordBatch) Decompress(body []byte, mem memory.Allocator) (*RecordBatch, *memory.Buffer, error) {
	if rb.Codec != CodecZstd && rb.Codec != CodecLZ4Frame {
		return nil, nil, fmt.Errorf("ipcmsg: cannot decompress a %s body", rb.Codec)
	}
	if int64(len(body)) < rb.BodyLength {
		return nil, nil, fmt.Errorf("ipcmsg: body has %d bytes, the metadata says %d", len(body), rb.BodyLength)
	}
	out := &RecordBatch{Length: rb.Length, Nodes: rb.Nodes, Codec: CodecNone, Variadic: rb.Variadic}
	out.Buffers = make([]Buffer, len(rb.Buffers))
	var pos int64
	for i := range rb.Buffers {
		n, err := rb.claim(body, i)
		if err != nil {
			return nil, nil, err
		}
		out.Buffers[i] = Buffer{Offset: pos, Length: n}
		pos += int64(align8(int(n) + decodeSlack))
	}
	out.BodyLength = pos
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(pos))
	dst := buf.Bytes()
	errs := make([]error, len(rb.Buffers))
	one := func(i int) {
		b, o := rb.Buffers[i], out.Buffers[i]
		if b.Length == 0 {
			return
		}
		src := body[b.Offset+8 : b.Offset+b.Length]
		to := dst[o.Offset : o.Offset+o.Length]
		if le64(body[b.Offset:]) == -1 {
			copy(to, src)
			return
		}
		var err error
		if rb.Codec == CodecLZ4Frame {
			err = DecodeLZ4Frame(src, to[:len(to):len(to)]) // no room into the next buffer, decoded in parallel
		} else {
			got, zerr := zstdDecoder.DecodeAll(src, dst[o.Offset:o.Offset:o.Offset+o.Length+decodeSlack])
			if err = zerr; err == nil && (len(got) != len(to) || len(got) > 0 && unsafe.SliceData(got) != unsafe.SliceData(to)) {
				err = fmt.Errorf("%d bytes, want %d", len(got), len(to))
			}
		}
		if err != nil {
			errs[i] = &BufferError{Buffer: i, Err: err}
		}
	}
	if rb.BodyLength >= parallelBytes {
		parallel.For(len(rb.Buffers), one)
	} else {
		for i := range rb.Buffers {
			one(i)
		}
	}
	for _, err := range errs {
		if err != nil {
			buf.Release()
			return nil, nil, err
		}
	}
	return out, buf, nil
}
