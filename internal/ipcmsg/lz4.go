package ipcmsg

// Arrow's LZ4_FRAME codec compresses each buffer as one LZ4 frame (lz4's
// frame format, lz4frame.h), not as a raw LZ4 block. Frames are written here
// with independent blocks of up to 4 MiB and no checksums (the log's CRC
// covers what it stores); they are read with every option the format has
// that Arrow's writers use: linked blocks (pyarrow's LZ4F defaults), block
// and content checksums (skipped, not verified) and the content size.

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
	lz4FlagContentChecksum = 0x04
	lz4FlagContentSize     = 0x08
	lz4FlagBlockChecksum   = 0x10
	lz4FlagIndependent     = 0x20
)

// lz4Header is the frame header AppendLZ4Frame writes: magic, FLG, BD and
// the header checksum (the second byte of the descriptor's xxHash32).
var lz4Header = [7]byte{0x04, 0x22, 0x4D, 0x18, lz4FLG, lz4BD, byte(xxh32Short([]byte{lz4FLG, lz4BD}) >> 8)}

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

// DecodeLZ4Frame decompresses the LZ4 frames of src into dst, which they
// must fill exactly.
func DecodeLZ4Frame(src, dst []byte) error {
	pos := 0
	for len(src) > 0 {
		if len(src) < 7 || binary.LittleEndian.Uint32(src) != lz4Magic {
			return errors.New("lz4 frame: bad magic")
		}
		flg := src[4]
		if flg>>6 != 1 {
			return fmt.Errorf("lz4 frame: version %d", flg>>6)
		}
		hdr := 7
		if flg&lz4FlagContentSize != 0 {
			hdr += 8
		}
		if flg&lz4FlagDictID != 0 {
			hdr += 4
		}
		if len(src) < hdr {
			return errLZ4Truncated
		}
		src = src[hdr:]
		start := pos
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
			if n > len(src) {
				return errLZ4Truncated
			}
			block := src[:n]
			src = src[n:]
			if size&lz4Uncompressed != 0 {
				if n > len(dst)-pos {
					return fmt.Errorf("lz4 frame: more than the %d bytes claimed", len(dst))
				}
				pos += copy(dst[pos:], block)
			} else {
				var dict []byte // linked blocks refer back into the output
				if flg&lz4FlagIndependent == 0 {
					dict = dst[max(start, pos-lz4Window):pos]
				}
				m, err := lz4.UncompressBlockWithDict(block, dst[pos:], dict)
				if err != nil {
					return fmt.Errorf("lz4 frame: %w", err)
				}
				pos += m
			}
			if flg&lz4FlagBlockChecksum != 0 {
				if len(src) < 4 {
					return errLZ4Truncated
				}
				src = src[4:]
			}
		}
		if flg&lz4FlagContentChecksum != 0 {
			if len(src) < 4 {
				return errLZ4Truncated
			}
			src = src[4:]
		}
	}
	if pos != len(dst) {
		return fmt.Errorf("lz4 frame: %d bytes, want %d", pos, len(dst))
	}
	return nil
}

// xxh32Short is xxHash32 with seed 0 of fewer than 16 bytes: what the frame
// header's checksum is taken of.
func xxh32Short(b []byte) uint32 {
	const p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
	h := uint32(p5) + uint32(len(b))
	for ; len(b) >= 4; b = b[4:] {
		h += binary.LittleEndian.Uint32(b) * p3
		h = bits.RotateLeft32(h, 17) * p4
	}
	for _, c := range b {
		h += uint32(c) * p5
		h = bits.RotateLeft32(h, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	return h ^ h>>16
}
