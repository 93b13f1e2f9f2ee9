package logstore

import (
	"encoding/binary"
	"hash/crc32"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
)

// column is one column of a frame: its IPC message metadata and body.
type column struct{ meta, body []byte }

// columnsOf returns the columns of an encoded frame (CodecNone).
func columnsOf(t *testing.T, frame []byte) []column {
	t.Helper()
	h, err := parseHeader(frame)
	if err != nil {
		t.Fatal(err)
	}
	p, err := parsePrefix(&h, frame)
	if err != nil {
		t.Fatal(err)
	}
	var cols []column
	for i, at := range p.colOffsets {
		meta := frame[at : at+p.metaLens[i]]
		cols = append(cols, column{meta, frame[at+p.metaLens[i] : at+p.metaLens[i]+p.bodyLens[i]]})
	}
	return cols
}

// craftFrame lays out a frame of rows rows and the columns cols, stored raw,
// with every checksum right: what a writer with access to the disk could
// make, and recovery and reads take as intact.
func craftFrame(rows int, cols []column) []byte {
	h := header{recordCount: uint32(rows), schemaID: 1, attributes: attrColumnCRCs, writerSeq: -1, columns: uint16(len(cols))}
	h.prefixLen = uint32(align8(h.statsAt()))
	prefix := make([]byte, h.prefixLen)
	var body []byte
	for i, c := range cols {
		at := fixedHeaderSize + i*dirEntryCRCSize
		binary.LittleEndian.PutUint32(prefix[at:], uint32(len(c.meta)))
		binary.LittleEndian.PutUint32(prefix[at+4:], uint32(len(c.body)))
		binary.LittleEndian.PutUint32(prefix[at+12:], crc32.Update(crc32.Checksum(c.meta, castagnoli), castagnoli, c.body))
		body = append(append(body, c.meta...), c.body...)
	}
	h.length = uint32(len(prefix) + len(body))
	h.putFixed(prefix)
	h.crc = checksum(crc32.Checksum(prefix[fixedHeaderSize:], castagnoli), prefix)
	h.putFixed(prefix)
	return append(prefix, body...)
}

// goodColumns returns the columns of a frame of ids 0 to 9.
func goodColumns(t *testing.T, mem memory.Allocator) []column {
	t.Helper()
	rec := makeRecord(t, mem, 0, 10)
	defer rec.Release()
	b := encode(t, newEncoder(t, CodecNone, mem), rec, Writer{})
	defer b.Release()
	return columnsOf(t, b.bytes())
}

// A frame whose checksums match content crafted to mislead the decoder (a
// buffer outside its column's body, string offsets past the values or
// going back, more rows than the body can hold) reaches the reader from
// disk: recovery takes it as intact. Decoding it is DATA_LOSS naming the
// file and the byte, never a panic, then or when the values are read.
func TestCraftedFrameIsDataLossNotAPanic(t *testing.T) {
	mem := checkedMem(t)
	good := goodColumns(t, mem)
	idLayout, err := ipcmsg.Parse(good[0].meta)
	if err != nil {
		t.Fatal(err)
	}
	nameLayout, err := ipcmsg.Parse(good[1].meta)
	if err != nil || len(nameLayout.Buffers) != 3 {
		t.Fatalf("name column layout %+v, %v", nameLayout, err)
	}
	withLayout := func(l ipcmsg.RecordBatch, edit func(*ipcmsg.RecordBatch)) []byte {
		l.Buffers = append([]ipcmsg.Buffer(nil), l.Buffers...)
		l.Nodes = append([]ipcmsg.Node(nil), l.Nodes...)
		edit(&l)
		return l.Marshal()
	}
	withOffset := func(i int, v int32) []byte {
		body := append([]byte(nil), good[1].body...)
		binary.LittleEndian.PutUint32(body[nameLayout.Buffers[1].Offset+int64(4*i):], uint32(v))
		return body
	}
	for name, cols := range map[string][]column{
		"buffer past the body": {{withLayout(*idLayout, func(l *ipcmsg.RecordBatch) {
			l.Buffers[1] = ipcmsg.Buffer{Offset: 1 << 40, Length: 80}
		}), good[0].body}, good[1], good[2]},
		"buffer at a negative offset": {{withLayout(*idLayout, func(l *ipcmsg.RecordBatch) {
			l.Buffers[1].Offset = -936748726788030410 - l.Buffers[1].Length // fuzz-smoke's
		}), good[0].body}, good[1], good[2]},
		"more rows than the body holds": {{withLayout(*idLayout, func(l *ipcmsg.RecordBatch) {
			l.Length, l.Nodes[0].Length = 1<<61, 1<<61
		}), good[0].body}, good[1], good[2]},
		"string offset past the values": {good[0], {good[1].meta, withOffset(10, 1<<30)}, good[2]},
		"string offsets going back":     {good[0], {good[1].meta, withOffset(5, 1)}, good[2]},
		"negative first string offset":  {good[0], {good[1].meta, withOffset(0, -8)}, good[2]},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeSegment(t, dir, craftFrame(10, cols))
			tbl := mustOpen(t, dir, 1, Options{})
			defer tbl.Close()
			if hw := tbl.HighWatermark(0); hw != 10 {
				t.Fatalf("recovery kept %d rows of the crafted frame, want its 10", hw)
			}
			err := readValues(tbl, mem)
			wantDataLoss(t, "read", err, filepath.Join(dir, "0", "log", segmentName(0)+".log"), 0)
		})
	}
}

// readValues reads every value of bucket 0, as a client's encoder would.
func readValues(tbl *Table, mem memory.Allocator) error {
	r, err := tbl.NewReader(0, 0, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	dec := NewDecoder(testSchema, mem)
	for {
		f, err := r.Next(tbl.HighWatermark(0))
		if err != nil || f == nil {
			return err
		}
		rec, err := f.Record(dec, testSchema)
		if err != nil {
			return err
		}
		for _, col := range rec.Columns() {
			readEvery(col)
		}
		rec.Release()
	}
}
