package logstore

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
)

// Each column's Arrow buffers are compressed on their own, as Arrow IPC's
// BUFFER body compression does, so that projection still reads only the
// projected columns and a read may send them on as stored. The compression
// is done here rather than by arrow-go's IPC writer, which builds a new zstd
// decoder for every message and never retries; these codecs are shared and
// safe for concurrent use.

// Codec is the compression of a frame's column bodies.
type Codec uint8

const (
	CodecNone Codec = iota
	CodecLZ4
	CodecZstd
)

// ipc is the Arrow IPC codec of the column bodies of frames compressed by
// buffer.
func (c Codec) ipc() ipcmsg.Codec {
	switch c {
	case CodecLZ4:
		return ipcmsg.CodecLZ4Frame
	case CodecZstd:
		return ipcmsg.CodecZstd
	}
	return ipcmsg.CodecNone
}

func (c Codec) String() string {
	switch c {
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return "none"
}

// The frame's CRC-32C covers the compressed bodies, so ZSTD's own content
// checksum is neither written nor checked (those of older frames are skipped).
// The decoder decodes into the room it is given and no more (a frame header
// claiming more would make it allocate what it claims).
var (
	zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.IgnoreChecksum(true), zstd.WithDecodeAllCapLimit(true))

	zstdEncodersMu sync.Mutex
	zstdEncoders   = map[zstd.EncoderLevel]*zstd.Encoder{}
)

func zstdEncoder(level int) (*zstd.Encoder, error) {
	l := zstd.EncoderLevelFromZstd(level)
	zstdEncodersMu.Lock()
	defer zstdEncodersMu.Unlock()
	if e, ok := zstdEncoders[l]; ok {
		return e, nil
	}
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(l), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false))
	if err != nil {
		return nil, err
	}
	zstdEncoders[l] = e
	return e, nil
}

// compressor compresses column bodies with one codec.
type compressor struct {
	codec Codec
	zstd  *zstd.Encoder
	// retry, if set, compresses what zstd leaves as it is. klauspost's
	// encoders below its "better" level find nothing in arithmetic
	// sequences such as a string column's offsets (stride 3: raw at level
	// 3), which "better" compresses to 60 %; libzstd's level 3 does too.
	retry *zstd.Encoder
}

// zstdRetryLevel is the level of compressor.retry.
const zstdRetryLevel = 7 // zstd.SpeedBetterCompression

func newCompressor(codec Codec, zstdLevel int) (*compressor, error) {
	c := &compressor{codec: codec}
	if codec == CodecZstd {
		var err error
		if c.zstd, err = zstdEncoder(zstdLevel); err != nil {
			return nil, err
		}
		if zstd.EncoderLevelFromZstd(zstdLevel) < zstd.EncoderLevelFromZstd(zstdRetryLevel) {
			if c.retry, err = zstdEncoder(zstdRetryLevel); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// zstdChunkBytes is the size of the pieces a large body is compressed in,
// each a ZSTD frame of its own: the pieces compress in parallel, and their
// concatenation is one valid ZSTD stream, which decompresses as a whole.
const zstdChunkBytes = 1 << 20

// chunks cuts src into the pieces it is compressed in.
func (c *compressor) chunks(src []byte) [][]byte {
	if c.codec != CodecZstd || len(src) < 2*zstdChunkBytes {
		return [][]byte{src}
	}
	var out [][]byte
	for len(src) > 0 {
		n := min(len(src), zstdChunkBytes)
		out, src = append(out, src[:n]), src[n:]
	}
	return out
}

// compress appends src compressed to dst. It reports false, leaving dst as
// it was, when compression would not save space.
func (c *compressor) compress(dst, src []byte) ([]byte, bool) {
	if len(src) == 0 {
		return dst, false
	}
	n := len(dst)
	switch c.codec {
	case CodecZstd:
		dst = c.zstd.EncodeAll(src, dst)
		if len(dst)-n >= len(src) && c.retry != nil {
			dst = c.retry.EncodeAll(src, dst[:n])
		}
	case CodecLZ4:
		dst = ipcmsg.AppendLZ4Frame(dst, src)
	default:
		return dst, false
	}
	if len(dst)-n >= len(src) {
		return dst[:n], false
	}
	return dst, true
}

// decompressSlack is the spare capacity past len(dst) that lets the ZSTD
// decoder copy 16 bytes at a time, overrunning into it, instead of
// byte-exactly.
const decompressSlack = 16

// decompress decompresses a column body compressed whole, as frames
// without attrByBuffer store them (ZSTD before the store compressed by
// buffer, LZ4 blocks before it wrote Arrow's LZ4 frames), into dst, which it
// must fill exactly. Give dst decompressSlack bytes of spare capacity (they
// may be overwritten) for speed.
func decompress(codec Codec, src, dst []byte) error {
	switch codec {
	case CodecZstd:
		out, err := zstdDecoder.DecodeAll(src, dst[:0])
		if err != nil {
			return err
		}
		if len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
			return fmt.Errorf("zstd: %d bytes, want %d", len(out), len(dst))
		}
		return nil
	case CodecLZ4:
		m, err := lz4.UncompressBlock(src, dst)
		if err != nil {
			return err
		}
		if m != len(dst) {
			return fmt.Errorf("lz4: %d bytes, want %d", m, len(dst))
		}
		return nil
	}
	return fmt.Errorf("unknown codec %d", codec)
}
