package logstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Batch is one encoded frame, ready to append. The fields that are known only
// at append time (offset, commit time, txn) are filled in by the log.
type Batch struct {
	prefix     []byte   // fixed header, writer id, directory, change types, padding
	pieces     [][]byte // per column: metadata, then stored body
	size       int
	payloadCRC uint32
	rows       int
}

// Rows reports the number of rows in the batch.
func (b *Batch) Rows() int { return b.rows }

// Size reports the encoded size in bytes.
func (b *Batch) Size() int { return b.size }

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
// CodecZstd (1 to 22; Fluss's default is 3).
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
		// Fresh buffers each time: the Batch keeps them until it is written,
		// and one encoder may encode several parts of a batch before that.
		cw.meta, cw.body, cw.packed = nil, make([]byte, 0, cw.lastBody), nil
		col := array.NewRecordBatch(cw.schema, []arrow.Array{rec.Column(i)}, rec.NumRows())
		err := cw.w.Write(col)
		col.Release()
		if err != nil {
			return nil, fmt.Errorf("encode column %q: %w", e.schema.Field(i).Name, err)
		}
		raw += len(cw.body)
		cw.lastBody = len(cw.body)
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
	if meta.ChangeTypes != nil {
		h.attributes |= attrChangelog
	}
	prefixLen := align8(fixedHeaderSize + len(meta.WriterID) + ncols*dirEntrySize + len(meta.Stats) + len(meta.ChangeTypes))
	h.prefixLen = uint32(prefixLen)
	size := prefixLen
	for _, cw := range e.columns {
		size += len(cw.meta) + len(cw.stored())
	}
	h.length = uint32(size)

	// The columns are not copied into one frame buffer: the log writes the
	// pieces with one vectored write.
	prefix := make([]byte, prefixLen)
	h.putFixed(prefix)
	pos := fixedHeaderSize
	pos += copy(prefix[pos:], meta.WriterID)
	for _, cw := range e.columns {
		binary.LittleEndian.PutUint32(prefix[pos:], uint32(len(cw.meta)))
		binary.LittleEndian.PutUint32(prefix[pos+4:], uint32(len(cw.stored())))
		binary.LittleEndian.PutUint32(prefix[pos+8:], uint32(cw.rawLen))
		pos += dirEntrySize
	}
	pos += copy(prefix[pos:], meta.Stats)
	copy(prefix[pos:], meta.ChangeTypes)
	b := &Batch{prefix: prefix, size: size, rows: rows}
	crc := crc32.Checksum(prefix[fixedHeaderSize:], castagnoli)
	for _, cw := range e.columns {
		b.pieces = append(b.pieces, cw.meta, cw.stored())
		crc = crc32.Update(crc, castagnoli, cw.meta)
		crc = crc32.Update(crc, castagnoli, cw.stored())
	}
	b.payloadCRC = crc
	return b, nil
}

// parallelCompressBytes is the batch size from which columns are compressed
// concurrently: below it, goroutines cost more than they save.
const parallelCompressBytes = 256 << 10

func (e *Encoder) compressColumns(raw int) {
	compress := func(cw *columnWriter) {
		cw.rawLen = 0
		if packed, ok := e.comp.compress(cw.packed, cw.body); ok {
			cw.packed, cw.rawLen = packed, len(cw.body)
		}
	}
	if e.comp.codec == CodecNone {
		for _, cw := range e.columns {
			cw.rawLen = 0
		}
		return
	}
	if raw < parallelCompressBytes || len(e.columns) == 1 {
		for _, cw := range e.columns {
			compress(cw)
		}
		return
	}
	inParallel(len(e.columns), func(i int) { compress(e.columns[i]) })
}

// inParallel calls fn(0), ..., fn(n-1) on up to GOMAXPROCS goroutines and
// waits for them: a frame's columns compress and decompress independently.
func inParallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// columnWriter captures the IPC payloads of one column: the first is the
// schema message, which the store does not need; the rest are record batches.
type columnWriter struct {
	schema   *arrow.Schema
	w        *ipc.Writer
	started  bool
	meta     []byte
	body     []byte
	packed   []byte // body compressed, when that saves space
	rawLen   int    // body length when packed is stored, else 0
	lastBody int    // size of the previous body, to size the next one
}

// stored is the body as the frame stores it.
func (cw *columnWriter) stored() []byte {
	if cw.rawLen > 0 {
		return cw.packed
	}
	return cw.body
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
	return p.SerializeBody((*appendWriter)(&cw.body))
}

type appendWriter []byte

func (w *appendWriter) Write(p []byte) (int, error) {
	*w = append(*w, p...)
	return len(p), nil
}

// Decoder turns the columns of frames back into Arrow arrays. It caches the
// per-column schema messages and is safe for concurrent use.
type Decoder struct {
	schema *arrow.Schema
	mem    memory.Allocator

	once    sync.Once
	schemas []*ipc.Message
	err     error
}

// NewDecoder returns a decoder for frames written with schema.
func NewDecoder(schema *arrow.Schema, mem memory.Allocator) *Decoder {
	return &Decoder{schema: schema, mem: mem}
}

// Schema returns the schema the decoder decodes.
func (d *Decoder) Schema() *arrow.Schema { return d.schema }

func (d *Decoder) init() {
	for i := range d.schema.NumFields() {
		sc := arrow.NewSchema([]arrow.Field{d.schema.Field(i)}, nil)
		// Cached for the decoder's life: garbage-collected memory, not d.mem.
		p := ipc.GetSchemaPayload(sc, memory.DefaultAllocator)
		meta := p.Meta()
		d.schemas = append(d.schemas, ipc.NewMessage(meta, memory.NewBufferBytes(nil)))
		meta.Release()
		p.Release()
	}
}

// Nulls returns an all-NULL column i of n rows, for frames written before
// the column was added.
func (d *Decoder) Nulls(i, n int) arrow.Array {
	return array.MakeArrayOfNull(d.mem, d.schema.Field(i).Type, n)
}

// Column decodes column i of a frame from its metadata and stored body
// (compressed with codec when rawLen > 0). The returned array may reference
// the bytes: uncompressed columns are not copied.
func (d *Decoder) Column(i int, meta, body []byte, codec Codec, rawLen int) (arrow.Array, error) {
	d.once.Do(d.init)
	if i < 0 || i >= len(d.schemas) {
		return nil, fmt.Errorf("decode column %d: schema has %d columns", i, len(d.schemas))
	}
	if rawLen > 0 {
		var err error
		if body, err = decompress(codec, body, rawLen); err != nil {
			return nil, fmt.Errorf("decode column %q: %w", d.schema.Field(i).Name, err)
		}
	}
	msg := ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(body))
	defer msg.Release()
	mr := &twoMessages{msgs: [2]*ipc.Message{d.schemas[i], msg}}
	r, err := ipc.NewReaderFromMessageReader(mr, ipc.WithAllocator(d.mem))
	if err != nil {
		return nil, fmt.Errorf("decode column %q: %w", d.schema.Field(i).Name, err)
	}
	defer r.Release()
	rec, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("decode column %q: %w", d.schema.Field(i).Name, err)
	}
	col := rec.Column(0)
	col.Retain()
	return col, nil
}

// twoMessages is an ipc.MessageReader over a schema message and one record
// batch message that the caller owns.
type twoMessages struct {
	msgs [2]*ipc.Message
	next int
}

func (m *twoMessages) Message() (*ipc.Message, error) {
	if m.next >= len(m.msgs) {
		return nil, io.EOF
	}
	msg := m.msgs[m.next]
	m.next++
	return msg, nil
}

func (m *twoMessages) Retain()  {}
func (m *twoMessages) Release() {}

func align8(n int) int { return (n + 7) &^ 7 }
