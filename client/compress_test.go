package client

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
	"github.com/fluxgate-io/fluxgate/internal/ipcmsg/ipcmsgtest"
)

// A batch compressed for sending, with ZSTD or LZ4 frames, is standard Arrow
// IPC that arrow-go reads back as it was, with every buffer compressed: with
// ZSTD the offsets of 12-byte strings too, which level 1 leaves as they are
// and the retry compresses.
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

	_, written := ipcmsgtest.Write(t, rec, ipc.WithAllocator(mem))
	rb, err := ipcmsg.Parse(written.Meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, codec := range []ipcmsg.Codec{ipcmsg.CodecZstd, ipcmsg.CodecLZ4Frame} {
		meta, body := compressBatch(rb, written.Body, codec)
		sent, err := ipcmsg.Parse(meta)
		if err != nil {
			t.Fatal(err)
		}
		if sent.Codec != codec {
			t.Fatalf("codec %s, want %s", sent.Codec, codec)
		}
		for i, buf := range sent.Buffers {
			// LZ4 finds nothing in the offsets; the ZSTD retry does.
			if buf.Length > 0 && int64(binary.LittleEndian.Uint64(body[buf.Offset:])) == -1 && (codec == ipcmsg.CodecZstd || i != 3) {
				t.Errorf("%s: buffer %d is sent uncompressed", codec, i)
			}
		}
		got, err := ipcmsg.Read(ipcmsg.SchemaMessage(schema), meta, memory.NewBufferBytes(body), mem)
		if err != nil {
			t.Fatal(err)
		}
		if !array.RecordEqual(got, rec) {
			t.Errorf("%s: read back\n%v\nwant\n%v", codec, got, rec)
		}
		got.Release()
	}
}
