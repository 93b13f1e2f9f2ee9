package ipcmsg

// Arrow's LZ4_FRAME codec compresses each buffer as one LZ4 frame (lz4's
// frame format, lz4frame.h), not as a raw LZ4 block. Frames are written here
// with independent blocks of up to 4 MiB and no checksums (the log's CRC
// covers what it stores). They are read strictly, since a frame read here
// may be stored and served as it is: it must be one frame that both of
// Arrow's readers take, LZ4F (pyarrow, Java) and pierrec/lz4 (arrow-go). So
// its header, block and content checksums are verified, as both do, and its
// block sizes, as both do; and, where pierrec is lax and LZ4F or Arrow is
// not, the reserved bits must be zero, the content size must be what it
// decompresses to, and nothing may follow the frame (Arrow's reader refuses
// a second frame, pierrec would read it). A dictionary id is refused: no
// dictionary can be given, and pierrec does not parse the field.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/pierrec/lz4/v4"
)

const (
	lz4Magic        = 0x184D2204
	lz4FLG          = 0x60    // version 01, independent blocks, no checksums, no content size
	lz4BD           = 0x70    // blocks of at most 4 MiB
	lz4BlockBytes   = 4 << 20 // the block size lz4BD says
	lz4Uncompressed = 1 << 31 // a block size's flag: the block is stored as it is
	lz4Window       = 64 << 10

	lz4FlagDictID          = 0x01
	lz4FlagReserved        = 0x02
	lz4FlagContentChecksum = 0x04
	lz4FlagContentSize     = 0x08
	lz4FlagBlockChecksum   = 0x10
	lz4FlagIndependent     = 0x20
	lz4BDReserved          = 0x8F // BD's bits other than the block size id
)

// lz4Header is the frame header AppendLZ4Frame writes: magic, FLG, BD and
// the header checksum (the second byte of the descriptor's xxHash32).
var lz4Header = [7]byte{0x04, 0x22, 0x4D, 0x18, lz4FLG, lz4BD, byte(xxh32([]byte{lz4FLG, lz4BD}) >> 8)}

// AppendLZ4Frame appends src compressed as one LZ4 frame to dst. A block
// that LZ4 does not make smaller is stored as it is.
func AppendLZ4Frame(dst, src []byte) []byte {
	// Room for the whole frame at once: each growth would copy and zero.
	blocks := (len(src) + lz4BlockBytes - 1) / lz4BlockBytes
	dst = slices.Grow(dst, len(lz4Header)+blocks*4+lz4.CompressBlockBound(len(src))+4)
	dst = append(dst, lz4Header[:]...)
	for len(src) > 0 {
		block := src[:min(len(src), lz4BlockBytes)]
		src = src[len(block):]
		at := len(dst)
		dst = slices.Grow(dst, 4+lz4.CompressBlockBound(len(block)))
		dst = dst[:at+4+lz4.CompressBlockBound(len(block))]
		n, err := lz4.CompressBlock(block, dst[at+4:], nil)
		if err != nil || n == 0 || n >= len(block) {
			dst = append(dst[:at+4], block...)
			binary.LittleEndian.PutUint32(dst[at:], uint32(len(block))|lz4Uncompressed)
			continue
		}
		dst = dst[:at+4+n]
		binary.LittleEndian.PutUint32(dst[at:], uint32(n))
	}
	return append(dst, 0, 0, 0, 0) // the end mark
}

var errLZ4Truncated = errors.New("lz4 frame: truncated")

// DecodeLZ4Frame decompresses src, one LZ4 frame, into dst, which it must
// fill exactly; it fails on a frame that one of Arrow's readers would refuse
// (see above).
func DecodeLZ4Frame(src, dst []byte) error {
	f, err := parseLZ4Header(src)
	if err != nil {
		return err
	}
	if f.flg&lz4FlagContentSize != 0 && f.contentSize != uint64(len(dst)) {
		return fmt.Errorf("lz4 frame: content size %d, want %d", f.contentSize, len(dst))
	}
	src = src[f.headerLen:]
	pos := 0
	for {
		if len(src) < 4 {
			return errLZ4Truncated
		}
		size := binary.LittleEndian.Uint32(src)
		src = src[4:]
		if size == 0 {
			break
		}
		n := int(size &^ lz4Uncompressed)
		if n > f.blockMax {
			return fmt.Errorf("lz4 frame: a block of %d bytes, over the frame's block size of %d", n, f.blockMax)
		}
		if n > len(src) {
			return errLZ4Truncated
		}
		block := src[:n]
		src = src[n:]
		if f.flg&lz4FlagBlockChecksum != 0 {
			if len(src) < 4 {
				return errLZ4Truncated
			}
			if xxh32(block) != binary.LittleEndian.Uint32(src) {
				return errors.New("lz4 frame: block checksum mismatch")
			}
			src = src[4:]
		}
		out := dst[pos:min(len(dst), pos+f.blockMax)] // a block decompresses to at most the block size
		if size&lz4Uncompressed != 0 {
			if n > len(out) {
				return fmt.Errorf("lz4 frame: more than the %d bytes claimed", len(dst))
			}
			pos += copy(out, block)
			continue
		}
		var dict []byte // linked blocks refer back into the output
		if f.flg&lz4FlagIndependent == 0 {
			dict = dst[max(0, pos-lz4Window):pos]
		}
		m, err := lz4.UncompressBlockWithDict(block, out, dict)
		if err != nil {
			return fmt.Errorf("lz4 frame: %w", err)
		}
		pos += m
	}
	if f.flg&lz4FlagContentChecksum != 0 {
		if len(src) < 4 {
			return errLZ4Truncated
		}
		if xxh32(dst[:pos]) != binary.LittleEndian.Uint32(src) {
			return errors.New("lz4 frame: content checksum mismatch")
		}
		src = src[4:]
	}
	if len(src) > 0 {
		return fmt.Errorf("lz4 frame: %d bytes after the end of the frame (one frame per buffer)", len(src))
	}
	if pos != len(dst) {
		return fmt.Errorf("lz4 frame: %d bytes, want %d", pos, len(dst))
	}
	return nil
}

// lz4Frame is what a frame header says.
type lz4Frame struct {
	flg         byte
	blockMax    int    // the largest block, stored or decompressed
	contentSize uint64 // with lz4FlagContentSize
	headerLen   int
}

// parseLZ4Header reads and checks the header that src starts with.
func parseLZ4Header(src []byte) (lz4Frame, error) {
	if len(src) < 4 || binary.LittleEndian.Uint32(src) != lz4Magic {
		return lz4Frame{}, errors.New("lz4 frame: bad magic (a buffer is one LZ4 frame)")
	}
	if len(src) < 7 {
		return lz4Frame{}, errLZ4Truncated
	}
	flg, bd := src[4], src[5]
	id := bd >> 4 & 7
	switch {
	case flg>>6 != 1:
		return lz4Frame{}, fmt.Errorf("lz4 frame: version %d", flg>>6)
	case flg&lz4FlagReserved != 0 || bd&lz4BDReserved != 0:
		return lz4Frame{}, errors.New("lz4 frame: reserved bits are set")
	case flg&lz4FlagDictID != 0:
		return lz4Frame{}, errors.New("lz4 frame: compressed with a dictionary, which cannot be given")
	case id < 4:
		return lz4Frame{}, fmt.Errorf("lz4 frame: block size id %d", id)
	}
	f := lz4Frame{flg: flg, blockMax: 1 << (8 + 2*id), headerLen: 7}
	if flg&lz4FlagContentSize != 0 {
		f.headerLen += 8
		if len(src) < f.headerLen {
			return lz4Frame{}, errLZ4Truncated
		}
		f.contentSize = binary.LittleEndian.Uint64(src[6:])
	}
	if byte(xxh32(src[4:f.headerLen-1])>>8) != src[f.headerLen-1] {
		return lz4Frame{}, errors.New("lz4 frame: header checksum mismatch")
	}
	return f, nil
}

// xxh32 is xxHash32 with seed 0, the checksum of LZ4 frames (pierrec/lz4
// has one, internal to it).
func xxh32(b []byte) uint32 {
	n := len(b)
	h := uint32(xxhP5)
	if n >= 16 {
		p1 := uint32(xxhP1) // a variable: the lanes' seeds wrap around
		v1, v2, v3, v4 := p1+xxhP2, uint32(xxhP2), uint32(0), -p1
		for ; len(b) >= 16; b = b[16:] {
			lanes := b[:16:16] // one bounds check for the four reads
			v1 = xxh32Round(v1, binary.LittleEndian.Uint32(lanes[0:4]))
			v2 = xxh32Round(v2, binary.LittleEndian.Uint32(lanes[4:8]))
			v3 = xxh32Round(v3, binary.LittleEndian.Uint32(lanes[8:12]))
			v4 = xxh32Round(v4, binary.LittleEndian.Uint32(lanes[12:16]))
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	}
	h += uint32(n)
	for ; len(b) >= 4; b = b[4:] {
		h += binary.LittleEndian.Uint32(b) * xxhP3
		h = bits.RotateLeft32(h, 17) * xxhP4
	}
	for _, c := range b {
		h += uint32(c) * xxhP5
		h = bits.RotateLeft32(h, 11) * xxhP1
	}
	h ^= h >> 15
	h *= xxhP2
	h ^= h >> 13
	h *= xxhP3
	return h ^ h>>16
}

const xxhP1, xxhP2, xxhP3, xxhP4, xxhP5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393

func xxh32Round(acc, in uint32) uint32 { return bits.RotateLeft32(acc+in*xxhP2, 13) * xxhP1 }
