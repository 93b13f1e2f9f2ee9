package logstore

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
)

// A ZSTD or LZ4 frame's columns go out as one compressed Arrow IPC message
// that arrow-go's own reader (as any Arrow reader) decodes to the rows
// appended, in the order asked for, whether a column was stored compressed
// or raw, with columns made up by the caller among them.
func TestFrameMessageIsStandardCompressedIPC(t *testing.T) {
	for _, codec := range []Codec{CodecZstd, CodecLZ4} {
		t.Run(codec.String(), func(t *testing.T) { testFrameMessage(t, codec) })
	}
}

func testFrameMessage(t *testing.T, codec Codec) {
	mem := checkedMem(t)
	tbl := mustOpen(t, t.TempDir(), 1, Options{})
	defer tbl.Close()
	enc := newEncoder(t, codec, mem)
	appendRows(t, tbl, enc, mem, 0, 0, 1, nil)          // too small to compress: stored raw
	appendRows(t, tbl, enc, mem, 0, 1, 5000, nil)       // compressed
	appendRows(t, tbl, enc, mem, 0, 5001, 300_000, nil) // 2.4 MB of ids, compressed in pieces
	projected := arrow.NewSchema([]arrow.Field{
		testSchema.Field(2), {Name: "tag", Type: arrow.BinaryTypes.String, Nullable: true}, testSchema.Field(0),
	}, nil)
	sawRaw, sawPacked := false, false
	from := 0
	eachFrame(t, tbl, func(f *Frame) {
		sawRaw = sawRaw || f.rawLens[0] == 0
		sawPacked = sawPacked || f.rawLens[0] > 0
		tag := tags(mem, f.Rows)
		defer tag.Release()
		longer := tags(mem, f.Rows+1)
		sliced := array.NewSlice(longer, 1, int64(f.Rows)+1)
		if _, ok := f.Message([]MessageColumn{{Stored: 0}, {Made: sliced}}); ok {
			t.Errorf("frame at %d: a message with a made column at an offset", f.BaseOffset)
		}
		sliced.Release()
		longer.Release()
		msg, ok := f.Message([]MessageColumn{{Stored: 2}, {Made: tag}, {Stored: 0}})
		if !ok {
			t.Fatalf("frame at %d: no message", f.BaseOffset)
		}
		if c := ipcmsg.CodecOf(msg.Meta); c != codec.ipc() {
			t.Fatalf("frame at %d: a %s message", f.BaseOffset, c)
		}
		body := bytes.Join(msg.Body, nil)
		if len(body) != msg.BodyLen {
			t.Fatalf("frame at %d: body of %d bytes, BodyLen %d", f.BaseOffset, len(body), msg.BodyLen)
		}
		got := readMessage(t, projected, msg.Meta, body, mem)
		all := makeRecord(t, mem, from, f.Rows)
		want := array.NewRecordBatch(projected, []arrow.Array{all.Column(2), tag, all.Column(0)}, all.NumRows())
		if !array.RecordEqual(got, want) {
			t.Errorf("frame at %d reads\n%v\nwant\n%v", f.BaseOffset, got, want)
		}
		from += f.Rows
		got.Release()
		want.Release()
		all.Release()
	})
	if from != 305_001 {
		t.Fatalf("read %d rows, want 305001", from)
	}
	if !sawRaw || !sawPacked {
		t.Fatalf("frames had raw id columns %v and compressed ones %v; want both", sawRaw, sawPacked)
	}
}

// Frames not compressed by buffer (uncompressed, and those of older stores:
// testdata) make no message.
func TestFrameMessageNeedsBufferCompression(t *testing.T) {
	mem := checkedMem(t)
	tbl := mustOpen(t, t.TempDir(), 1, Options{})
	appendRows(t, tbl, newEncoder(t, CodecNone, mem), mem, 0, 0, 5000, nil)
	eachFrame(t, tbl, func(f *Frame) {
		if _, ok := f.Message([]MessageColumn{{Stored: 0}}); ok {
			t.Error("uncompressed frame: a compressed message")
		}
	})
	tbl.Close()
	for _, name := range oldSegments {
		tbl := openOldSegment(t, name)
		eachFrame(t, tbl, func(f *Frame) {
			if _, ok := f.Message([]MessageColumn{{Stored: 0}}); ok {
				t.Errorf("%s: frame at %d makes a message without decompressing", name, f.BaseOffset)
			}
		})
		tbl.Close()
	}
}

// tags is a made-up string column of n rows, every third NULL.
func tags(mem memory.Allocator, n int) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for k := range n {
		if k%3 == 0 {
			b.AppendNull()
		} else {
			b.Append(strings.Repeat("t", k%5))
		}
	}
	return b.NewArray()
}

// readMessage decodes one record batch message of schema with arrow-go.
func readMessage(t *testing.T, schema *arrow.Schema, meta, body []byte, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	rec, err := ipcmsg.Read(ipcmsg.SchemaMessage(schema), meta, memory.NewBufferBytes(body), mem)
	if err != nil {
		t.Fatalf("arrow-go cannot read the message: %v", err)
	}
	return rec
}
