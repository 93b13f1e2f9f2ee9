package client

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
)

// A batch compressed for sending is standard Arrow IPC that arrow-go reads
// back as it was, with every buffer compressed: the offsets of 12-byte
// strings too, which level 1 leaves as they are and the retry compresses.
func TestCompressBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	for i := range 50_000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("site-%07d", i%500))
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()

	var last lastPayload
	w := ipc.NewWriterWithPayloadWriter(&last, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rb, err := ipcmsg.Parse(last.meta)
	if err != nil {
		t.Fatal(err)
	}
	meta, body := compressBatch(rb, last.body.Bytes())
	sent, err := ipcmsg.Parse(meta)
	if err != nil {
		t.Fatal(err)
	}
	if sent.Codec != ipcmsg.CodecZstd {
		t.Fatalf("codec %s, want zstd", sent.Codec)
	}
	for i, buf := range sent.Buffers {
		if buf.Length > 0 && int64(binary.LittleEndian.Uint64(body[buf.Offset:])) == -1 {
			t.Errorf("buffer %d is sent uncompressed", i)
		}
	}
	got, err := ipcmsg.Read(ipcmsg.SchemaMessage(schema), meta, memory.NewBufferBytes(body), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if !array.RecordEqual(got, rec) {
		t.Fatalf("read back\n%v\nwant\n%v", got, rec)
	}
}

// lastPayload keeps the metadata and body of the last IPC payload written.
type lastPayload struct {
	meta []byte
	body bytes.Buffer
}

func (p *lastPayload) Start() error { return nil }
func (p *lastPayload) Close() error { return nil }
func (p *lastPayload) WritePayload(pl ipc.Payload) error {
	meta := pl.Meta()
	defer meta.Release()
	p.meta = bytes.Clone(meta.Bytes())
	p.body.Reset()
	return pl.SerializeBody(&p.body)
}
