package logstore

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
	"github.com/fluxgate-io/fluxgate/internal/ipcmsg/ipcmsgtest"
)

// A batch that arrived compressed with the table's codec (ZSTD, or LZ4
// frames as arrow-go's writer makes them) is stored with the bytes it
// arrived in (its columns in another order than the table's, as a writer
// may send them), and reads back as the rows sent, decoded and as one
// message.
func TestReceivedColumnsAreStoredAsReceived(t *testing.T) {
	for _, tc := range []struct {
		codec Codec
		opt   ipc.Option
	}{{CodecZstd, ipc.WithZstd()}, {CodecLZ4, ipc.WithLZ4()}} {
		t.Run(tc.codec.String(), func(t *testing.T) { testStoredAsReceived(t, tc.codec, tc.opt) })
	}
}

func testStoredAsReceived(t *testing.T, codec Codec, opt ipc.Option) {
	mem := checkedMem(t)
	tbl := mustOpen(t, t.TempDir(), 1, Options{})
	defer tbl.Close()
	enc := newEncoder(t, codec, mem)
	rec := makeRecord(t, mem, 0, 5000)
	defer rec.Release()
	// Sent as score, id, name.
	sentSchema := arrow.NewSchema([]arrow.Field{testSchema.Field(2), testSchema.Field(0), testSchema.Field(1)}, nil)
	sent := array.NewRecordBatch(sentSchema, []arrow.Array{rec.Column(2), rec.Column(0), rec.Column(1)}, rec.NumRows())
	defer sent.Release()
	meta, body := sentMessage(t, sent, opt)
	recv := NewReceived(sentSchema, meta, body)
	if recv == nil {
		t.Fatalf("a %s batch of flat columns cannot be stored as received", codec)
	}
	b, err := enc.EncodeReceived(rec, BatchMeta{SchemaID: 1, WriterSeq: -1}, recv, []int{1, 2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Append([]Part{{Bucket: 0, Batch: b}}, Writer{}); err != nil {
		t.Fatal(err)
	}
	dec := NewDecoder(testSchema, mem)
	frames := 0
	eachFrame(t, tbl, func(f *Frame) {
		frames++
		for i, sentCol := range []int{1, 2, 0} {
			want := recv.cols[sentCol].body
			if f.rawLens[i] == 0 || !bytes.Equal(f.bodies[i], want) {
				t.Errorf("column %d: stored %d bytes (raw length %d), not the %d bytes received", i, len(f.bodies[i]), f.rawLens[i], len(want))
			}
		}
		got, err := f.Record(dec, testSchema)
		if err != nil {
			t.Fatal(err)
		}
		defer got.Release()
		if !array.RecordEqual(got, rec) {
			t.Errorf("decoded\n%v\nwant\n%v", got, rec)
		}
		msg, ok := f.Message([]MessageColumn{{Stored: 0}, {Stored: 1}, {Stored: 2}})
		if !ok {
			t.Fatal("no message of the stored columns")
		}
		asMessage := readMessage(t, testSchema, msg.Meta, bytes.Join(msg.Body, nil), mem)
		defer asMessage.Release()
		if !array.RecordEqual(asMessage, rec) {
			t.Errorf("as one message\n%v\nwant\n%v", asMessage, rec)
		}
	})
	if frames != 1 {
		t.Fatalf("%d frames, want 1", frames)
	}
}

// Only compressed batches of flat columns are stored as received, by an
// encoder of their codec; the encoder of another codec compresses as it
// would have.
func TestReceivedNeedsTheCodecAndFlatColumns(t *testing.T) {
	mem := checkedMem(t)
	rec := makeRecord(t, mem, 0, 5000)
	defer rec.Release()
	meta, body := sentMessage(t, rec, ipc.WithZstd())
	uncompressed := *meta
	uncompressed.Codec = ipcmsg.CodecNone
	if NewReceived(testSchema, &uncompressed, body) != nil {
		t.Error("an uncompressed batch can be stored as received")
	}
	list := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, nil)
	if NewReceived(list, meta, body) != nil {
		t.Error("a batch with a list column can be stored as received")
	}
	recv := NewReceived(testSchema, meta, body)
	if recv == nil {
		t.Fatal("no received batch")
	}
	lz4, err := NewEncoder(testSchema, CodecLZ4, 3, mem)
	if err != nil {
		t.Fatal(err)
	}
	b, err := lz4.EncodeReceived(rec, BatchMeta{SchemaID: 1, WriterSeq: -1}, recv, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	start := uintptr(unsafe.Pointer(unsafe.SliceData(body)))
	received := []memRange{{start, start + uintptr(len(body))}}
	for _, p := range b.pieces {
		if within(received, p) {
			t.Fatalf("the LZ4 encoder stored %d received ZSTD bytes", len(p))
		}
	}
}

// sentMessage is rec as arrow-go's IPC writer sends it with compression
// opt: its metadata and body.
func sentMessage(t *testing.T, rec arrow.RecordBatch, opt ipc.Option) (*ipcmsg.RecordBatch, []byte) {
	t.Helper()
	_, sent := ipcmsgtest.Write(t, rec, opt)
	rb, err := ipcmsg.Parse(sent.Meta)
	if err != nil {
		t.Fatal(err)
	}
	return rb, sent.Body
}
