package logstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
	"github.com/fluxgate-io/fluxgate/internal/parallel"
)

// Batch is one encoded frame, ready to append. The fields that are known only
// at append time (offset, commit time, txn) are filled in by the log. Its
// uncompressed column bodies reference the record's own buffers, so the
// Batch holds the record until the frame is written (or Release is called).
type Batch struct {
	prefix     []byte   // fixed header, writer id, directory, change types, padding
	pieces     [][]byte // per column: metadata, then stored body (maybe several slices)
	size       int
	payloadCRC uint32
	rows       int
	hold       arrow.RecordBatch
}

// Rows reports the number of rows in the batch.
func (b *Batch) Rows() int { return b.rows }

// Size reports the encoded size in bytes.
func (b *Batch) Size() int { return b.size }

// Release lets go of the record the batch references. Appending a batch
// releases it once written; a batch that is not appended must be released.
func (b *Batch) Release() {
	if b.hold != nil {
		b.hold.Release()
		b.hold = nil
	}
}

// bytes assembles the frame in one buffer (recovery tests and fuzzing).
func (b *Batch) bytes() []byte {
	out := append([]byte(nil), b.prefix...)
	for _, p := range b.pieces {
		out = append(out, p...)
	}
	return out
}

// BatchMeta is what a frame says about its rows besides the columns.
type BatchMeta struct {
	SchemaID int32
	// Stats is an opaque statistics block that readers use to skip the frame
	// without reading its columns (package predicate writes and reads it).
	Stats       []byte
	ChangeTypes []byte // one per row; nil for append-only batches
	WriterID    string
	WriterSeq   int64 // -1 without a writer
}

// Encoder turns record batches of one schema into frames. Each column is an
// Arrow IPC record batch message of its own, its body compressed on its own,
// so that a reader can read and decode just the columns it projects. An
// Encoder keeps one IPC writer per column and is not safe for concurrent use.
type Encoder struct {
	schema  *arrow.Schema
	comp    *compressor
	columns []*columnWriter
}

// NewEncoder returns an encoder for records of schema. zstdLevel applies to
// CodecZstd (1 to 22; the table default is 1, Fluss's 3).
func NewEncoder(schema *arrow.Schema, codec Codec, zstdLevel int, mem memory.Allocator) (*Encoder, error) {
	comp, err := newCompressor(codec, zstdLevel)
	if err != nil {
		return nil, err
	}
	e := &Encoder{schema: schema, comp: comp}
	for i := range schema.NumFields() {
		cw := &columnWriter{}
		cw.schema = arrow.NewSchema([]arrow.Field{schema.Field(i)}, nil)
		cw.w = ipc.NewWriterWithPayloadWriter(cw, ipc.WithSchema(cw.schema), ipc.WithAllocator(mem))
		e.columns = append(e.columns, cw)
	}
	return e, nil
}

// Encode encodes rec, whose schema must equal the encoder's.
func (e *Encoder) Encode(rec arrow.RecordBatch, meta BatchMeta) (*Batch, error) {
	return e.EncodeReceived(rec, meta, nil, nil)
}

// EncodeReceived encodes rec, as Encode does, storing its column i as
// column cols[i] of recv if that can be stored as received (recv decoded is
// rec). A nil recv encodes every column.
func (e *Encoder) EncodeReceived(rec arrow.RecordBatch, meta BatchMeta, recv *Received, cols []int) (*Batch, error) {
	if !rec.Schema().Equal(e.schema) {
		return nil, fmt.Errorf("encode batch: schema %s does not match %s", rec.Schema(), e.schema)
	}
	rows := int(rec.NumRows())
	if meta.ChangeTypes != nil && len(meta.ChangeTypes) != rows {
		return nil, fmt.Errorf("encode batch: %d change types for %d rows", len(meta.ChangeTypes), rows)
	}
	ncols := len(e.columns)
	raw := 0
	for i, cw := range e.columns {
		// Fresh slices each time: the Batch keeps them until it is written,
		// and one encoder may encode several parts of a batch before that.
		cw.meta, cw.body, cw.bodyLen, cw.flat, cw.layout = nil, nil, 0, nil, nil
		if rc, ok := e.received(recv, cols, i); ok {
			cw.received, cw.meta, cw.packed, cw.rawLen = true, rc.layout.Marshal(), [][]byte{rc.body}, rc.raw
			continue
		}
		cw.received = false
		cw.owned = memRanges(cw.owned[:0], rec.Column(i).Data())
		col := array.NewRecordBatch(cw.schema, []arrow.Array{rec.Column(i)}, rec.NumRows())
		err := cw.w.Write(col)
		col.Release()
		if err != nil {
			return nil, fmt.Errorf("encode column %q: %w", e.schema.Field(i).Name, err)
		}
		raw += cw.bodyLen
	}
	e.compressColumns(raw)

	h := header{
		recordCount: uint32(rows),
		schemaID:    meta.SchemaID,
		attributes:  uint16(e.comp.codec) << attrCodecShift,
		writerSeq:   meta.WriterSeq,
		writerIDLen: uint16(len(meta.WriterID)),
		columns:     uint16(ncols),
		statsLen:    uint32(len(meta.Stats)),
	}
	h.attributes |= attrColumnCRCs
	if meta.ChangeTypes != nil {
		h.attributes |= attrChangelog
	}
	if e.byBuffer() {
		h.attributes |= attrByBuffer
	}
	prefixLen := align8(h.statsAt() + len(meta.Stats) + len(meta.ChangeTypes))
	h.prefixLen = uint32(prefixLen)
	size := prefixLen
	for _, cw := range e.columns {
		size += len(cw.meta) + cw.storedLen()
	}
	h.length = uint32(size)

	// The columns are not copied into one frame buffer: the log writes the
	// pieces with one vectored write.
	b := &Batch{size: size, rows: rows}
	prefix := make([]byte, prefixLen)
	h.putFixed(prefix)
	pos := fixedHeaderSize
	pos += copy(prefix[pos:], meta.WriterID)
	for _, cw := range e.columns {
		b.pieces = append(b.pieces, cw.meta)
		crc := crc32.Checksum(cw.meta, castagnoli)
		for _, p := range cw.stored() {
			b.pieces = append(b.pieces, p)
			crc = crc32.Update(crc, castagnoli, p)
		}
		binary.LittleEndian.PutUint32(prefix[pos:], uint32(len(cw.meta)))
		binary.LittleEndian.PutUint32(prefix[pos+4:], uint32(cw.storedLen()))
		binary.LittleEndian.PutUint32(prefix[pos+8:], uint32(cw.rawLen))
		binary.LittleEndian.PutUint32(prefix[pos+12:], crc)
		pos += dirEntryCRCSize
	}
	pos += copy(prefix[pos:], meta.Stats)
	copy(prefix[pos:], meta.ChangeTypes)
	b.prefix = prefix
	b.payloadCRC = crc32.Checksum(prefix[fixedHeaderSize:], castagnoli)
	rec.Retain()
	b.hold = rec
	return b, nil
}

// parallelCompressBytes is the batch size from which columns are compressed
// concurrently: below it, goroutines cost more than they save.
const parallelCompressBytes = 256 << 10

// received returns the received column that column i of the encoder is,
// if it can be stored as received.
func (e *Encoder) received(recv *Received, cols []int, i int) (receivedColumn, bool) {
	if recv == nil || recv.codec != e.comp.codec.ipc() || i >= len(cols) {
		return receivedColumn{}, false
	}
	return recv.column(cols[i])
}

func (e *Encoder) compressColumns(raw int) {
	for _, cw := range e.columns {
		if !cw.received {
			cw.rawLen, cw.packed = 0, nil
		}
	}
	if e.comp.codec == CodecNone {
		return
	}
	// A job is one piece of one Arrow buffer.
	type job struct {
		cw  *columnWriter
		buf int
		src []byte
		out []byte
		ok  bool
	}
	var jobs []job
	for _, cw := range e.columns {
		if cw.bodyLen == 0 || cw.received {
			continue
		}
		body := cw.flatBody()
		var err error
		if cw.layout, err = ipcmsg.Parse(cw.meta); err != nil {
			continue // not a batch arrow-go wrote: stored as it is
		}
		for i, b := range cw.layout.Buffers {
			for _, chunk := range e.comp.chunks(body[b.Offset : b.Offset+b.Length]) {
				jobs = append(jobs, job{cw: cw, buf: i, src: chunk})
			}
		}
	}
	compress := func(i int) { jobs[i].out, jobs[i].ok = e.comp.compress(nil, jobs[i].src) }
	if raw < parallelCompressBytes || len(jobs) == 1 {
		for i := range jobs {
			compress(i)
		}
	} else {
		parallel.For(len(jobs), compress)
	}
	// A buffer is stored compressed if each of its pieces compressed and
	// together they save space.
	for i := 0; i < len(jobs); {
		cw := jobs[i].cw
		packed := make([][]byte, len(cw.layout.Buffers))
		saved := false
		for i < len(jobs) && jobs[i].cw == cw {
			j, out, ok, n := i, jobs[i].out, jobs[i].ok, len(jobs[i].src)
			for i++; i < len(jobs) && jobs[i].cw == cw && jobs[i].buf == jobs[j].buf; i++ {
				out = append(out, jobs[i].out...)
				ok = ok && jobs[i].ok
				n += len(jobs[i].src)
			}
			if ok && len(out) < n {
				saved, packed[jobs[j].buf] = true, out
			}
		}
		if saved {
			layout, pieces := cw.layout.Compress(cw.flatBody(), e.comp.codec.ipc(), packed)
			cw.meta, cw.packed = layout.Marshal(), pieces
			cw.rawLen = cw.bodyLen
		}
	}
}

// byBuffer reports whether columns are compressed by Arrow buffer, as Arrow
// IPC's BUFFER body compression does, so that a read may send them on
// without decompressing: every compressed frame the encoder writes is (ZSTD
// frames, and LZ4 frames as Arrow's LZ4 frame per buffer). Frames written
// before compressed each column body whole (LZ4: as one LZ4 block).
func (e *Encoder) byBuffer() bool { return e.comp.codec != CodecNone }

// flatBody returns the column's body in one piece. Compressed columns may
// reference it (their incompressible buffers), so it is not reused.
func (cw *columnWriter) flatBody() []byte {
	if len(cw.body) == 1 {
		return cw.body[0]
	}
	if cw.flat == nil {
		cw.flat = make([]byte, 0, cw.bodyLen)
		for _, p := range cw.body {
			cw.flat = append(cw.flat, p...)
		}
	}
	return cw.flat
}

// columnWriter captures the IPC payloads of one column: the first is the
// schema message, which the store does not need; the rest are record batches.
// A body is kept as the slices the IPC writer hands over: those inside the
// column's own buffers are referenced, not copied (the Batch holds the
// record), and the rest (padding, buffers the writer made) are copied.
type columnWriter struct {
	schema  *arrow.Schema
	w       *ipc.Writer
	started bool
	// received: the body is a received column's, stored as received
	// (packed, rawLen); nothing was written or compressed.
	received bool
	owned    []memRange // the column's buffers, as address ranges
	meta     []byte
	body     [][]byte
	bodyLen  int
	flat     []byte              // the body in one piece, as compression input
	layout   *ipcmsg.RecordBatch // the body's buffers, when compressed by buffer
	packed   [][]byte            // the body as stored compressed, when that saves space
	rawLen   int                 // body length when packed is stored, else 0
}

// stored is the body as the frame stores it.
func (cw *columnWriter) stored() [][]byte {
	if cw.rawLen > 0 {
		return cw.packed
	}
	return cw.body
}

func (cw *columnWriter) storedLen() int {
	n := 0
	for _, p := range cw.stored() {
		n += len(p)
	}
	return n
}

func (cw *columnWriter) Start() error { return nil }
func (cw *columnWriter) Close() error { return nil }

func (cw *columnWriter) WritePayload(p ipc.Payload) error {
	if !cw.started {
		cw.started = true
		return nil
	}
	meta := p.Meta()
	cw.meta = append(cw.meta, meta.Bytes()...)
	meta.Release()
	// Pad the metadata so that the body, and so every Arrow buffer, stays
	// 8-byte aligned within the frame.
	cw.meta = append(cw.meta, make([]byte, align8(len(cw.meta))-len(cw.meta))...)
	return p.SerializeBody((*bodyWriter)(cw))
}

// bodyWriter is the io.Writer SerializeBody writes a column's body to.
type bodyWriter columnWriter

// referenceBytes is the size from which a slice inside the column's buffers
// is referenced rather than copied.
const referenceBytes = 4 << 10

func (w *bodyWriter) Write(p []byte) (int, error) {
	cw := (*columnWriter)(w)
	cw.bodyLen += len(p)
	if len(p) >= referenceBytes && within(cw.owned, p) {
		cw.body = append(cw.body, p)
		return len(p), nil
	}
	// Small pieces are appended to the last copied piece.
	if n := len(cw.body); n > 0 && cap(cw.body[n-1]) > len(cw.body[n-1]) && !within(cw.owned, cw.body[n-1]) {
		cw.body[n-1] = append(cw.body[n-1], p...)
		return len(p), nil
	}
	cw.body = append(cw.body, append(make([]byte, 0, max(len(p), 256)), p...))
	return len(p), nil
}

// memRange is the address range of one Arrow buffer.
type memRange struct{ start, end uintptr }

// memRanges appends the address ranges of the buffers of data and its
// children.
func memRanges(dst []memRange, data arrow.ArrayData) []memRange {
	for _, b := range data.Buffers() {
		if b == nil || b.Len() == 0 {
			continue
		}
		start := uintptr(unsafe.Pointer(unsafe.SliceData(b.Bytes())))
		dst = append(dst, memRange{start, start + uintptr(b.Len())})
	}
	for _, c := range data.Children() {
		dst = memRanges(dst, c)
	}
	if data.DataType().ID() == arrow.DICTIONARY {
		dst = memRanges(dst, data.Dictionary())
	}
	return dst
}

// within reports whether p lies inside one of the ranges.
func within(ranges []memRange, p []byte) bool {
	if len(p) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	end := start + uintptr(len(p))
	for _, r := range ranges {
		if start >= r.start && end <= r.end {
			return true
		}
	}
	return false
}

// Decoder turns the columns of frames back into Arrow arrays. It caches the
// per-column schema messages and is safe for concurrent use.
type Decoder struct {
	schema *arrow.Schema
	mem    memory.Allocator

	once    sync.Once
	schemas []*ipc.Message
}

// NewDecoder returns a decoder for frames written with schema.
func NewDecoder(schema *arrow.Schema, mem memory.Allocator) *Decoder {
	return &Decoder{schema: schema, mem: mem}
}

// Schema returns the schema the decoder decodes.
func (d *Decoder) Schema() *arrow.Schema { return d.schema }

func (d *Decoder) init() {
	for i := range d.schema.NumFields() {
		d.schemas = append(d.schemas, ipcmsg.SchemaMessage(arrow.NewSchema([]arrow.Field{d.schema.Field(i)}, nil)))
	}
}

// Nulls returns an all-NULL column i of n rows, for frames written before
// the column was added.
func (d *Decoder) Nulls(i, n int) arrow.Array {
	return array.MakeArrayOfNull(d.mem, d.schema.Field(i).Type, n)
}

// Column decodes column i of a frame from its metadata and stored body
// (compressed with codec when rawLen > 0, by Arrow buffer when byBuffer).
// The returned array may reference the bytes: uncompressed columns are not
// copied.
func (d *Decoder) Column(i int, meta, body []byte, codec Codec, rawLen int, byBuffer bool) (arrow.Array, error) {
	d.once.Do(d.init)
	if i < 0 || i >= len(d.schemas) {
		return nil, fmt.Errorf("decode column %d: schema has %d columns", i, len(d.schemas))
	}
	bodyBuf := memory.NewBufferBytes(body)
	var layout *ipcmsg.RecordBatch // of the uncompressed body
	switch {
	case rawLen > 0 && byBuffer:
		// The metadata describes the compressed body; decompressing gives
		// a body of the decoder's allocator and the metadata for it.
		stored, err := ipcmsg.Parse(meta)
		if err == nil {
			layout, bodyBuf, err = stored.Decompress(body, d.mem)
		}
		if err != nil {
			return nil, fmt.Errorf("decode column %q: %w", d.schema.Field(i).Name, err)
		}
	case rawLen > 0:
		// Decompressed into the decoder's allocator, which gets the memory
		// back when the last array made of it is released.
		bodyBuf = memory.NewResizableBuffer(d.mem)
		bodyBuf.Reserve(rawLen + decompressSlack)
		bodyBuf.Resize(rawLen)
		if err := decompress(codec, body, bodyBuf.Bytes()); err != nil {
			bodyBuf.Release()
			return nil, fmt.Errorf("decode column %q: %w", d.schema.Field(i).Name, err)
		}
	}
	defer bodyBuf.Release() // the array holds references of its own
	decompressed := layout != nil
	if !decompressed {
		// A metadata that does not parse, or whose buffers lie outside
		// the body, goes to the IPC reader, which says what is wrong.
		if stored, err := ipcmsg.Parse(meta); err == nil {
			layout = stored
		}
	}
	if layout != nil {
		a, ok, err := flatColumn(d.schema.Field(i).Type, layout, bodyBuf)
		if err != nil {
			return nil, fmt.Errorf("decode column %q: %w", d.schema.Field(i).Name, err)
		}
		if ok {
			return a, nil
		}
	}
	if decompressed {
		meta = layout.Marshal()
	}
	rec, err := ipcmsg.Read(d.schemas[i], meta, bodyBuf, d.mem)
	if err != nil {
		return nil, fmt.Errorf("decode column %q: %w", d.schema.Field(i).Name, err)
	}
	defer rec.Release()
	col := rec.Column(0)
	// The IPC reader checks that buffers lie in the body, not what is in
	// them: offsets of lists and strings that would index outside their
	// values when read.
	if err := array.ValidateFull(col); err != nil {
		return nil, fmt.Errorf("decode column %q: %w", d.schema.Field(i).Name, err)
	}
	col.Retain()
	return col, nil
}

func align8(n int) int { return (n + 7) &^ 7 }
