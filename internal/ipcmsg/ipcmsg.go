// Package ipcmsg reads and writes the metadata of Arrow IPC record batch
// messages and undoes their buffer compression. With it, batches are stored,
// compressed, joined by column and sent as Arrow buffers, without being
// decoded into arrays: arrow-go keeps its flatbuffer types internal, and its
// reader decompresses ZSTD about six times slower than a shared decoder.
package ipcmsg

import (
	"encoding/binary"
	"errors"
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"
)

// Codec is a body compression codec, as Arrow's CompressionType numbers it.
type Codec int8

const (
	CodecNone     Codec = -1 // no BodyCompression: buffers are stored as they are
	CodecLZ4Frame Codec = 0
	CodecZstd     Codec = 1
)

func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecLZ4Frame:
		return "lz4_frame"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// Node is one array of the batch, in depth-first order of the schema.
type Node struct{ Length, NullCount int64 }

// Buffer is where one buffer lies in the message body. In a compressed body
// a buffer that is not empty starts with its uncompressed length (int64,
// little endian; -1 when the rest is not compressed).
type Buffer struct{ Offset, Length int64 }

// RecordBatch is the metadata of a record batch message.
type RecordBatch struct {
	Length     int64 // rows
	Nodes      []Node
	Buffers    []Buffer
	Codec      Codec
	Variadic   []int64 // variadicBufferCounts (string and binary views)
	BodyLength int64
}

// The flatbuffer schema's numbers (format/Message.fbs, format/Schema.fbs).
const (
	metadataV5        = 4
	headerRecordBatch = 3

	msgVersion, msgHeaderType, msgHeader, msgBodyLength     = 0, 1, 2, 3
	rbLength, rbNodes, rbBuffers, rbCompression, rbVariadic = 0, 1, 2, 3, 4
	compCodec, compMethod                                   = 0, 1
	structBytes                                             = 16 // FieldNode and Buffer: two int64s
)

var errTruncated = errors.New("ipcmsg: metadata is truncated or its offsets are out of range")

// Parse reads the flatbuffer metadata of a record batch message (as in a
// FlightData data_header: no continuation marker or length prefix). It checks
// every offset, so it fails rather than panics on corrupt input.
func Parse(meta []byte) (*RecordBatch, error) {
	fb := flatbuf(meta)
	msg, ok := fb.root()
	if !ok {
		return nil, errTruncated
	}
	if t, ok := msg.uint8(msgHeaderType, 0); !ok {
		return nil, errTruncated
	} else if t != headerRecordBatch {
		return nil, fmt.Errorf("ipcmsg: message header type %d is not a record batch", t)
	}
	rb := &RecordBatch{Codec: CodecNone}
	body, ok := msg.int64(msgBodyLength, 0)
	if !ok {
		return nil, errTruncated
	}
	rb.BodyLength = int64(body)
	rbt, ok := msg.table(msgHeader)
	if !ok || rbt.pos == 0 {
		return nil, errTruncated
	}
	length, ok := rbt.int64(rbLength, 0)
	if !ok {
		return nil, errTruncated
	}
	rb.Length = int64(length)
	nodes, ok1 := rbt.vector(rbNodes, structBytes)
	bufs, ok2 := rbt.vector(rbBuffers, structBytes)
	if !ok1 || !ok2 {
		return nil, errTruncated
	}
	rb.Nodes = pairsOf(nodes, func(n, nulls int64) Node { return Node{n, nulls} })
	rb.Buffers = pairsOf(bufs, func(off, n int64) Buffer { return Buffer{off, n} })
	comp, ok := rbt.table(rbCompression)
	if !ok {
		return nil, errTruncated
	}
	if comp.pos != 0 {
		codec, ok1 := comp.uint8(compCodec, 0)
		method, ok2 := comp.uint8(compMethod, 0)
		if !ok1 || !ok2 {
			return nil, errTruncated
		}
		if method != 0 {
			return nil, fmt.Errorf("ipcmsg: body compression method %d is not BUFFER", method)
		}
		rb.Codec = Codec(int8(codec))
	}
	variadic, ok := rbt.vector(rbVariadic, 8)
	if !ok {
		return nil, errTruncated
	}
	for i := 0; i < len(variadic); i += 8 {
		rb.Variadic = append(rb.Variadic, le64(variadic[i:]))
	}
	return rb, rb.check()
}

// CodecOf returns the body compression of a record batch message's
// metadata, CodecNone for other messages or metadata that does not parse.
// It allocates nothing: readers ask it of every message.
func CodecOf(meta []byte) Codec {
	fb := flatbuf(meta)
	msg, ok := fb.root()
	if !ok {
		return CodecNone
	}
	if t, ok := msg.uint8(msgHeaderType, 0); !ok || t != headerRecordBatch {
		return CodecNone
	}
	rbt, ok := msg.table(msgHeader)
	if !ok || rbt.pos == 0 {
		return CodecNone
	}
	comp, ok := rbt.table(rbCompression)
	if !ok || comp.pos == 0 {
		return CodecNone
	}
	codec, ok := comp.uint8(compCodec, 0)
	if !ok {
		return CodecNone
	}
	return Codec(int8(codec))
}

// check verifies that the buffers lie inside the body.
func (rb *RecordBatch) check() error {
	if rb.Length < 0 || rb.BodyLength < 0 {
		return fmt.Errorf("ipcmsg: negative length (%d rows, %d body bytes)", rb.Length, rb.BodyLength)
	}
	for i, b := range rb.Buffers {
		if b.Offset < 0 || b.Length < 0 || b.Offset > rb.BodyLength || b.Length > rb.BodyLength-b.Offset {
			return fmt.Errorf("ipcmsg: buffer %d (offset %d, length %d) is outside the %d-byte body", i, b.Offset, b.Length, rb.BodyLength)
		}
		if rb.Codec != CodecNone && b.Length > 0 && b.Length < 8 {
			return fmt.Errorf("ipcmsg: compressed buffer %d has %d bytes, too few for its length prefix", i, b.Length)
		}
	}
	return nil
}

// Marshal returns the message's flatbuffer metadata, padded to a multiple of
// 8 bytes so that a body written after it stays aligned.
func (rb *RecordBatch) Marshal() []byte {
	b := flatbuffers.NewBuilder(128 + structBytes*(len(rb.Nodes)+len(rb.Buffers)) + 8*len(rb.Variadic))
	var variadic flatbuffers.UOffsetT
	if len(rb.Variadic) > 0 {
		b.StartVector(8, len(rb.Variadic), 8)
		for i := len(rb.Variadic) - 1; i >= 0; i-- {
			b.PrependInt64(rb.Variadic[i])
		}
		variadic = b.EndVector(len(rb.Variadic))
	}
	buffers := pairsVector(b, len(rb.Buffers), func(i int) (int64, int64) { return rb.Buffers[i].Offset, rb.Buffers[i].Length })
	nodes := pairsVector(b, len(rb.Nodes), func(i int) (int64, int64) { return rb.Nodes[i].Length, rb.Nodes[i].NullCount })
	var comp flatbuffers.UOffsetT
	if rb.Codec != CodecNone {
		b.StartObject(2)
		b.PrependInt8Slot(compMethod, 0, -1) // BUFFER, written out: the default is not the point here
		b.PrependInt8Slot(compCodec, int8(rb.Codec), -1)
		comp = b.EndObject()
	}
	b.StartObject(5)
	if variadic != 0 {
		b.PrependUOffsetTSlot(rbVariadic, variadic, 0)
	}
	if comp != 0 {
		b.PrependUOffsetTSlot(rbCompression, comp, 0)
	}
	b.PrependUOffsetTSlot(rbBuffers, buffers, 0)
	b.PrependUOffsetTSlot(rbNodes, nodes, 0)
	b.PrependInt64Slot(rbLength, rb.Length, -1)
	header := b.EndObject()
	b.StartObject(5)
	b.PrependInt64Slot(msgBodyLength, rb.BodyLength, -1)
	b.PrependUOffsetTSlot(msgHeader, header, 0)
	b.PrependInt16Slot(msgVersion, metadataV5, 0)
	b.PrependByteSlot(msgHeaderType, headerRecordBatch, 0)
	b.Finish(b.EndObject())
	out := b.FinishedBytes()
	return append(out, make([]byte, align8(len(out))-len(out))...)
}

// pairsVector writes a vector of n structs of two int64s, pair(i) giving
// the i-th.
func pairsVector(b *flatbuffers.Builder, n int, pair func(i int) (int64, int64)) flatbuffers.UOffsetT {
	b.StartVector(structBytes, n, 8)
	for i := n - 1; i >= 0; i-- {
		x, y := pair(i)
		b.Prep(8, structBytes)
		b.PrependInt64(y)
		b.PrependInt64(x)
	}
	return b.EndVector(n)
}

// pairsOf decodes a vector of structs of two int64s.
func pairsOf[T any](b []byte, of func(x, y int64) T) []T {
	out := make([]T, len(b)/structBytes)
	for i := range out {
		out[i] = of(le64(b[i*structBytes:]), le64(b[i*structBytes+8:]))
	}
	return out
}

func align8(n int) int { return (n + 7) &^ 7 }

func le64(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) }

// flatbuf reads a flatbuffer with bounds checks.
type flatbuf []byte

// table is a flatbuffer table: its position and its vtable's. pos 0 is an
// absent table.
type table struct {
	fb     flatbuf
	pos    int
	vtable int
	vsize  int
}

func (fb flatbuf) u32(at int) (int, bool) {
	if at < 0 || at+4 > len(fb) {
		return 0, false
	}
	return int(binary.LittleEndian.Uint32(fb[at:])), true
}

func (fb flatbuf) root() (table, bool) {
	pos, ok := fb.u32(0)
	if !ok {
		return table{}, false
	}
	return fb.tableAt(pos)
}

func (fb flatbuf) tableAt(pos int) (table, bool) {
	soff, ok := fb.u32(pos)
	if !ok || pos == 0 {
		return table{}, false
	}
	vt := pos - int(int32(soff))
	if vt < 0 || vt+4 > len(fb) {
		return table{}, false
	}
	vsize := int(binary.LittleEndian.Uint16(fb[vt:]))
	if vsize < 4 || vt+vsize > len(fb) {
		return table{}, false
	}
	return table{fb: fb, pos: pos, vtable: vt, vsize: vsize}, true
}

// field returns the position of field i, 0 when absent.
func (t table) field(i int) int {
	at := 4 + 2*i
	if at+2 > t.vsize {
		return 0
	}
	off := int(binary.LittleEndian.Uint16(t.fb[t.vtable+at:]))
	if off == 0 {
		return 0
	}
	return t.pos + off
}

func (t table) scalar(i, size int) ([]byte, bool) {
	at := t.field(i)
	if at == 0 {
		return nil, true
	}
	if at+size > len(t.fb) {
		return nil, false
	}
	return t.fb[at : at+size], true
}

func (t table) uint8(i int, def uint8) (uint8, bool) {
	b, ok := t.scalar(i, 1)
	if !ok || b == nil {
		return def, ok
	}
	return b[0], true
}

func (t table) int64(i int, def uint64) (uint64, bool) {
	b, ok := t.scalar(i, 8)
	if !ok || b == nil {
		return def, ok
	}
	return binary.LittleEndian.Uint64(b), true
}

// table returns the table field i points to (pos 0 when absent).
func (t table) table(i int) (table, bool) {
	at := t.field(i)
	if at == 0 {
		return table{}, true
	}
	off, ok := t.fb.u32(at)
	if !ok {
		return table{}, false
	}
	return t.fb.tableAt(at + off)
}

// vector returns the bytes of vector field i of elements of size elem (nil
// when absent).
func (t table) vector(i, elem int) ([]byte, bool) {
	at := t.field(i)
	if at == 0 {
		return nil, true
	}
	off, ok := t.fb.u32(at)
	if !ok {
		return nil, false
	}
	n, ok := t.fb.u32(at + off)
	start := at + off + 4
	if !ok || n > (len(t.fb)-start)/elem {
		return nil, false
	}
	return t.fb[start : start+n*elem], true
}
