package logstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// A frame is one batch on disk. Layout (little-endian; docs/format/log-segment.md):
//
//	 0  magic        u32  "FGL1"
//	 4  length       u32  bytes of the whole frame
//	 8  crc          u32  CRC-32C of the payload (with column checksums: of the
//	                      prefix's payload), then of header bytes [12,76)
//	12  baseOffset   i64
//	20  commitTs     i64  unix ms, shared by every row
//	28  txn          u64  table-wide append sequence
//	36  durableTxn   u64  every txn <= this was durable when this frame was appended
//	44  recordCount  u32
//	48  schemaID     i32
//	52  attributes   u16  bit 0: changelog (a change-type vector precedes the columns); bits 8-9: codec;
//	                      bit 10: compressed columns are compressed by Arrow buffer, not whole;
//	                      bit 11: column checksums (below)
//	54  txnParts     u16  buckets the txn wrote to
//	56  writerSeq    i64  -1 without a writer
//	64  writerIDLen  u16
//	66  columns      u16
//	68  statsLen     u32
//	72  prefixLen    u32  bytes from the frame start to the first column byte
//	76  payload: writer id, column directory (per column: metaLen u32, bodyLen u32,
//	    rawLen u32: the body's length before compression, 0 when stored raw;
//	    with bit 11 also crc u32: CRC-32C of the column's metadata and body),
//	    statistics, change types (recordCount bytes, changelog frames only), zero
//	    padding to a multiple of 8, then per column its Arrow IPC message metadata
//	    (padded to 8) followed by its body.
//
// The CRC covers the payload first so that it can be computed before the append
// lock is taken; the fields that are assigned under the lock (offset, time, txn)
// are folded in afterwards.
//
// With column checksums (bit 11, every frame written since) the frame's CRC
// covers only its prefix, whose directory holds each column's CRC: a reader
// that projects some columns verifies every byte it reads, and only those.
// Older frames are verified whole.
const (
	frameMagic      = 0x314C4746 // "FGL1"
	fixedHeaderSize = 76
	crcStart        = 12
	dirEntrySize    = 12 // a directory entry without a checksum
	dirEntryCRCSize = 16 // with one

	attrChangelog   = 1 << 0
	attrCodecShift  = 8
	attrCodecMask   = 3 << attrCodecShift
	attrByBuffer    = 1 << 10 // compressed columns are compressed by Arrow buffer
	attrColumnCRCs  = 1 << 11 // the directory holds a CRC per column; the frame's covers the prefix
	maxFrameColumns = 1<<16 - 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is the decoded fixed part of a frame.
type header struct {
	length      uint32
	crc         uint32
	baseOffset  int64
	commitTs    int64
	txn         uint64
	durableTxn  uint64
	recordCount uint32
	schemaID    int32
	attributes  uint16
	txnParts    uint16
	writerSeq   int64
	writerIDLen uint16
	columns     uint16
	statsLen    uint32
	prefixLen   uint32
}

// offsets returns how many offsets the frame takes: one per row, and one for a
// frame without rows (a write that changed nothing still moves the log on).
func (h *header) offsets() int64 { return max(int64(h.recordCount), 1) }

func (h *header) nextOffset() int64 { return h.baseOffset + h.offsets() }

func (h *header) changelog() bool { return h.attributes&attrChangelog != 0 }

func (h *header) codec() Codec { return Codec((h.attributes & attrCodecMask) >> attrCodecShift) }

func (h *header) byBuffer() bool { return h.attributes&attrByBuffer != 0 }

func (h *header) columnCRCs() bool { return h.attributes&attrColumnCRCs != 0 }

// dirEntry is the size of one column's directory entry.
func (h *header) dirEntry() int {
	if h.columnCRCs() {
		return dirEntryCRCSize
	}
	return dirEntrySize
}

// statsAt is where the statistics block starts in the frame.
func (h *header) statsAt() int {
	return fixedHeaderSize + int(h.writerIDLen) + int(h.columns)*h.dirEntry()
}

// stats returns the statistics block of a frame's prefix.
func (h *header) stats(prefix []byte) []byte {
	at := h.statsAt()
	return prefix[at : at+int(h.statsLen)]
}

func (h *header) putFixed(b []byte) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], frameMagic)
	le.PutUint32(b[4:], h.length)
	le.PutUint32(b[8:], h.crc)
	le.PutUint64(b[12:], uint64(h.baseOffset))
	le.PutUint64(b[20:], uint64(h.commitTs))
	le.PutUint64(b[28:], h.txn)
	le.PutUint64(b[36:], h.durableTxn)
	le.PutUint32(b[44:], h.recordCount)
	le.PutUint32(b[48:], uint32(h.schemaID))
	le.PutUint16(b[52:], h.attributes)
	le.PutUint16(b[54:], h.txnParts)
	le.PutUint64(b[56:], uint64(h.writerSeq))
	le.PutUint16(b[64:], h.writerIDLen)
	le.PutUint16(b[66:], h.columns)
	le.PutUint32(b[68:], h.statsLen)
	le.PutUint32(b[72:], h.prefixLen)
}

// parseHeader decodes and sanity-checks the fixed header. It does not check the
// CRC, which needs the whole frame.
func parseHeader(b []byte) (header, error) {
	if len(b) < fixedHeaderSize {
		return header{}, fmt.Errorf("frame header: %d bytes, want %d", len(b), fixedHeaderSize)
	}
	le := binary.LittleEndian
	if m := le.Uint32(b[0:]); m != frameMagic {
		return header{}, fmt.Errorf("frame header: bad magic %#x", m)
	}
	h := header{
		length:      le.Uint32(b[4:]),
		crc:         le.Uint32(b[8:]),
		baseOffset:  int64(le.Uint64(b[12:])),
		commitTs:    int64(le.Uint64(b[20:])),
		txn:         le.Uint64(b[28:]),
		durableTxn:  le.Uint64(b[36:]),
		recordCount: le.Uint32(b[44:]),
		schemaID:    int32(le.Uint32(b[48:])),
		attributes:  le.Uint16(b[52:]),
		txnParts:    le.Uint16(b[54:]),
		writerSeq:   int64(le.Uint64(b[56:])),
		writerIDLen: le.Uint16(b[64:]),
		columns:     le.Uint16(b[66:]),
		statsLen:    le.Uint32(b[68:]),
		prefixLen:   le.Uint32(b[72:]),
	}
	minPrefix := uint64(h.statsAt()) + uint64(h.statsLen)
	if h.changelog() {
		minPrefix += uint64(h.recordCount)
	}
	minPrefix = (minPrefix + 7) &^ 7
	if uint64(h.prefixLen) != minPrefix || h.length < h.prefixLen || h.baseOffset < 0 {
		return header{}, fmt.Errorf("frame header: inconsistent lengths (length %d, prefix %d, want prefix %d)", h.length, h.prefixLen, minPrefix)
	}
	return h, nil
}

// checksum computes a frame's CRC from its payload CRC and its fixed header.
func checksum(payloadCRC uint32, frame []byte) uint32 {
	return crc32.Update(payloadCRC, castagnoli, frame[crcStart:fixedHeaderSize])
}

// verify reports whether a whole frame's CRCs match: "" if they do, else
// which part does not.
func verify(h *header, frame []byte) string {
	if !h.columnCRCs() {
		if checksum(crc32.Checksum(frame[fixedHeaderSize:], castagnoli), frame) != h.crc {
			return "a frame whose checksum does not match"
		}
		return ""
	}
	if problem := verifyPrefix(h, frame); problem != "" {
		return problem
	}
	p, err := parsePrefix(h, frame)
	if err != nil {
		return err.Error()
	}
	for i := range p.colOffsets {
		at := p.colOffsets[i]
		if problem := p.verifyColumn(i, frame[at:at+p.metaLens[i]+p.bodyLens[i]]); problem != "" {
			return problem
		}
	}
	return ""
}

// verifiedLen is how much of a frame a reader checks before it trusts the
// header: the prefix, or all of a frame without column checksums.
func (h *header) verifiedLen() int {
	if h.columnCRCs() {
		return int(h.prefixLen)
	}
	return int(h.length)
}

// verifyHead checks the first verifiedLen bytes of a frame: "" if they
// match their CRC.
func verifyHead(h *header, head []byte) string {
	if h.columnCRCs() {
		return verifyPrefix(h, head)
	}
	return verify(h, head[:h.length])
}

// verifyPrefix checks the CRC of the prefix of a frame with column
// checksums (header, writer id, directory, statistics, change types):
// "" if it matches.
func verifyPrefix(h *header, prefix []byte) string {
	if checksum(crc32.Checksum(prefix[fixedHeaderSize:h.prefixLen], castagnoli), prefix) != h.crc {
		return "a frame whose checksum does not match" // of its prefix
	}
	return ""
}

// verifyColumn checks column i's bytes, its metadata and body, against its
// CRC in the directory: "" if it matches.
func (p *prefix) verifyColumn(i int, b []byte) string {
	if crc32.Checksum(b, castagnoli) != p.crcs[i] {
		return fmt.Sprintf("a frame whose column %d checksum does not match", i)
	}
	return ""
}

// prefix is the decoded variable part of a frame before the column data.
type prefix struct {
	writerID    string
	colOffsets  []uint32 // start of column i's metadata, relative to the frame
	metaLens    []uint32
	bodyLens    []uint32
	rawLens     []uint32
	crcs        []uint32 // with column checksums
	stats       []byte
	changeTypes []byte
}

// memory is what reading the columns cols of the frame (nil: all of its
// columns) takes: each as stored, and decompressed.
func (p *prefix) memory(cols []int, columns int) int64 {
	var n int64
	add := func(c int) {
		n += int64(p.metaLens[c]) + int64(p.bodyLens[c]) + int64(p.rawLens[c])
	}
	if cols == nil {
		for c := range columns {
			add(c)
		}
	}
	for _, c := range cols {
		if c >= 0 && c < columns {
			add(c)
		}
	}
	return n
}

func parsePrefix(h *header, b []byte) (prefix, error) {
	if uint32(len(b)) < h.prefixLen {
		return prefix{}, fmt.Errorf("frame prefix: %d bytes, want %d", len(b), h.prefixLen)
	}
	le := binary.LittleEndian
	p := prefix{}
	pos := uint32(fixedHeaderSize)
	p.writerID = string(b[pos : pos+uint32(h.writerIDLen)])
	pos += uint32(h.writerIDLen)
	n := int(h.columns)
	p.colOffsets = make([]uint32, n)
	p.metaLens = make([]uint32, n)
	p.bodyLens = make([]uint32, n)
	p.rawLens = make([]uint32, n)
	if h.columnCRCs() {
		p.crcs = make([]uint32, n)
	}
	at := uint64(h.prefixLen)
	for i := range n {
		p.metaLens[i] = le.Uint32(b[pos:])
		p.bodyLens[i] = le.Uint32(b[pos+4:])
		p.rawLens[i] = le.Uint32(b[pos+8:])
		if p.crcs != nil {
			p.crcs[i] = le.Uint32(b[pos+12:])
		}
		pos += uint32(h.dirEntry())
		p.colOffsets[i] = uint32(at)
		at += uint64(p.metaLens[i]) + uint64(p.bodyLens[i])
	}
	if at != uint64(h.length) {
		return prefix{}, fmt.Errorf("frame prefix: columns end at %d, frame length %d", at, h.length)
	}
	p.stats = b[pos : pos+h.statsLen]
	pos += h.statsLen
	if h.changelog() {
		p.changeTypes = b[pos : pos+h.recordCount]
	}
	return p, nil
}
