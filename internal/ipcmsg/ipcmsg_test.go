package ipcmsg

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/zstd"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg/ipcmsgtest"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// testRecord has nullable fixed-width, string, view, list and struct
// columns, some compressible and some not.
func testRecord(t testing.TB, mem memory.Allocator, rows int) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "noise", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: arrow.BinaryTypes.StringView},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.FixedWidthTypes.Boolean, Nullable: true})},
		{Name: "empty", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	x := uint64(88172645463325252)
	for i := range rows {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%5 == 0 {
			b.Field(1).AppendNull()
			b.Field(2).AppendNull()
		} else {
			b.Field(1).(*array.Uint64Builder).Append(x)
			b.Field(2).(*array.StringBuilder).Append([]string{"mobile", "desktop", "tablet"}[i%3])
		}
		b.Field(3).(*array.StringViewBuilder).Append(strings.Repeat("view", i%7))
		lb := b.Field(4).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Int32Builder).AppendValues([]int32{int32(i), int32(i % 3)}, nil)
		sb := b.Field(5).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.BooleanBuilder).Append(i%2 == 0)
		b.Field(6).(*array.StringBuilder).Append("")
	}
	return b.NewRecordBatch()
}

// readBatch reads a record batch message with arrow-go's reader.
func readBatch(t testing.TB, schema, batch ipcmsgtest.Message) arrow.RecordBatch {
	t.Helper()
	sm := ipc.NewMessage(memory.NewBufferBytes(schema.Meta), memory.NewBufferBytes(nil))
	defer sm.Release()
	rec, err := Read(sm, batch.Meta, memory.NewBufferBytes(batch.Body), memtest.Allocator(t))
	if err != nil {
		t.Fatalf("arrow-go cannot read the message: %v", err)
	}
	return rec
}

// checkedRecord returns an allocator checked for leaks when the test ends
// and a test record of rows from it.
func checkedRecord(t *testing.T, rows int) (*memory.CheckedAllocator, arrow.RecordBatch) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	rec := testRecord(t, mem, rows)
	t.Cleanup(rec.Release)
	return mem, rec
}

func mustParse(t *testing.T, meta []byte) *RecordBatch {
	t.Helper()
	rb, err := Parse(meta)
	if err != nil {
		t.Fatal(err)
	}
	return rb
}

// assertDecompressesTo checks that rb's body decompresses into a message
// that arrow-go reads as want.
func assertDecompressesTo(t *testing.T, rb *RecordBatch, body []byte, schema ipcmsgtest.Message, want arrow.RecordBatch, mem memory.Allocator) {
	t.Helper()
	urb, ubody, err := rb.Decompress(body, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer ubody.Release()
	if urb.Codec != CodecNone {
		t.Fatalf("decompressed metadata keeps codec %s", urb.Codec)
	}
	got := readBatch(t, schema, ipcmsgtest.Message{Meta: urb.Marshal(), Body: ubody.Bytes()})
	defer got.Release()
	assertEqual(t, want, got)
}

func assertEqual(t *testing.T, want, got arrow.RecordBatch) {
	t.Helper()
	if !array.RecordEqual(want, got) {
		t.Fatalf("records differ:\nwant %v\ngot  %v", want, got)
	}
}

func TestParseReadsWhatArrowWrites(t *testing.T) {
	_, rec := checkedRecord(t, 300)
	for _, tc := range []struct {
		name  string
		codec Codec
		opts  []ipc.Option
	}{
		{"none", CodecNone, nil},
		{"zstd", CodecZstd, []ipc.Option{ipc.WithZstd()}},
		{"lz4", CodecLZ4Frame, []ipc.Option{ipc.WithLZ4()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema, batch := ipcmsgtest.Write(t, rec, tc.opts...)
			rb := mustParse(t, batch.Meta)
			if got := CodecOf(batch.Meta); got != tc.codec {
				t.Fatalf("CodecOf: %s, want %s", got, tc.codec)
			}
			if rb.Length != 300 || rb.Codec != tc.codec || rb.BodyLength != int64(len(batch.Body)) {
				t.Fatalf("parsed %d rows, codec %s, body %d; want 300, %s, %d", rb.Length, rb.Codec, rb.BodyLength, tc.codec, len(batch.Body))
			}
			// id, noise, s, v, l + its values, st + a, empty.
			if len(rb.Nodes) != 9 || rb.Nodes[1].NullCount != 60 || rb.Nodes[0].Length != 300 {
				t.Fatalf("nodes %v", rb.Nodes)
			}
			if len(rb.Variadic) != 1 {
				t.Fatalf("variadic buffer counts %v, want one (the view column)", rb.Variadic)
			}
			// What Marshal writes, arrow-go reads as the same batch.
			again, err := Parse(rb.Marshal())
			if err != nil {
				t.Fatal(err)
			}
			if !equalBatches(rb, again) {
				t.Fatalf("Marshal then Parse: %+v, want %+v", again, rb)
			}
			got := readBatch(t, schema, ipcmsgtest.Message{Meta: rb.Marshal(), Body: batch.Body})
			defer got.Release()
			assertEqual(t, rec, got)
		})
	}
}

func equalBatches(a, b *RecordBatch) bool {
	return a.Length == b.Length && a.Codec == b.Codec && a.BodyLength == b.BodyLength &&
		slices.Equal(a.Nodes, b.Nodes) && slices.Equal(a.Buffers, b.Buffers) && slices.Equal(a.Variadic, b.Variadic)
}

func TestCompressWritesWhatArrowDecompresses(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	codecs := map[Codec]func(src []byte) []byte{
		CodecZstd:     func(src []byte) []byte { return enc.EncodeAll(src, nil) },
		CodecLZ4Frame: func(src []byte) []byte { return AppendLZ4Frame(nil, src) },
	}
	for codec, compress := range codecs {
		t.Run(codec.String(), func(t *testing.T) { testCompress(t, codec, compress) })
	}
}

func testCompress(t *testing.T, codec Codec, compress func(src []byte) []byte) {
	mem, rec := checkedRecord(t, 1000)
	schema, batch := ipcmsgtest.Write(t, rec)
	rb := mustParse(t, batch.Meta)
	// Every other buffer compressed, the rest stored as they are (-1).
	packed := make([][]byte, len(rb.Buffers))
	for i, b := range rb.Buffers {
		if i%2 == 0 && b.Length > 0 {
			packed[i] = compress(batch.Body[b.Offset : b.Offset+b.Length])
		}
	}
	crb, pieces := rb.Compress(batch.Body, codec, packed)
	body := bytes.Join(pieces, nil)
	if int64(len(body)) != crb.BodyLength {
		t.Fatalf("pieces hold %d bytes, metadata says %d", len(body), crb.BodyLength)
	}
	for i, b := range crb.Buffers {
		if b.Offset%8 != 0 {
			t.Fatalf("buffer %d at offset %d: not 8-byte aligned", i, b.Offset)
		}
	}
	got := readBatch(t, schema, ipcmsgtest.Message{Meta: crb.Marshal(), Body: body})
	defer got.Release()
	assertEqual(t, rec, got)

	// And Decompress undoes it.
	assertDecompressesTo(t, mustParse(t, crb.Marshal()), body, schema, rec, mem)
}

func TestDecompressReadsWhatArrowCompresses(t *testing.T) {
	for name, opt := range map[string]ipc.Option{"zstd": ipc.WithZstd(), "lz4": ipc.WithLZ4()} {
		t.Run(name, func(t *testing.T) {
			mem, rec := checkedRecord(t, 50_000) // large enough to decompress on all cores
			schema, batch := ipcmsgtest.Write(t, rec, opt)
			rb := mustParse(t, batch.Meta)
			if rb.BodyLength < parallelBytes {
				t.Fatalf("body of %d bytes does not exercise parallel decompression", rb.BodyLength)
			}
			assertDecompressesTo(t, rb, batch.Body, schema, rec, mem)
		})
	}
}

func TestDecompressRejectsCorruptBodies(t *testing.T) {
	mem, rec := checkedRecord(t, 500)
	_, batch := ipcmsgtest.Write(t, rec, ipc.WithZstd())
	rb := mustParse(t, batch.Meta)
	first := rb.Buffers[0]
	for name, corrupt := range map[string]func(b []byte){
		"huge length":     func(b []byte) { b[first.Offset+7] = 0x7f },
		"negative length": func(b []byte) { b[first.Offset] = 0xfe; b[first.Offset+7] = 0xff },
		"wrong length":    func(b []byte) { b[first.Offset]++ },
		"bad frame":       func(b []byte) { b[first.Offset+8] ^= 0xff },
	} {
		body := bytes.Clone(batch.Body)
		corrupt(body)
		if _, out, err := rb.Decompress(body, mem); err == nil {
			out.Release()
			t.Errorf("%s: decompressed without error", name)
		}
	}
	if _, _, err := rb.Decompress(batch.Body[:len(batch.Body)-1], mem); err == nil {
		t.Error("a short body decompressed without error")
	}
}

func TestParseRejectsOtherMessagesAndGarbage(t *testing.T) {
	rec := testRecord(t, memtest.Allocator(t), 10)
	defer rec.Release()
	schema, batch := ipcmsgtest.Write(t, rec)
	if _, err := Parse(schema.Meta); err == nil || !strings.Contains(err.Error(), "not a record batch") {
		t.Fatalf("schema message: %v", err)
	}
	if c := CodecOf(schema.Meta); c != CodecNone {
		t.Fatalf("CodecOf(schema ipcmsgtest.Message) = %s", c)
	}
	for n := range len(batch.Meta) - 1 {
		if _, err := Parse(batch.Meta[:n]); err == nil && n < 64 {
			t.Fatalf("metadata cut to %d bytes parsed", n)
		}
	}
}

func FuzzParse(f *testing.F) {
	rec := testRecord(f, memtest.Allocator(f), 20)
	defer rec.Release()
	for _, opts := range [][]ipc.Option{nil, {ipc.WithZstd()}, {ipc.WithLZ4()}} {
		_, batch := ipcmsgtest.Write(f, rec, opts...)
		f.Add(batch.Meta, batch.Body)
	}
	f.Fuzz(func(t *testing.T, meta, body []byte) {
		rb, err := Parse(meta)
		if err != nil {
			return
		}
		if c := CodecOf(meta); c != rb.Codec {
			t.Fatalf("CodecOf %s, Parse %s", c, rb.Codec)
		}
		again, err := Parse(rb.Marshal())
		if err != nil || !equalBatches(rb, again) {
			t.Fatalf("Marshal of a parsed message does not parse back: %v", err)
		}
		if rb.Codec != CodecNone && int64(len(body)) >= rb.BodyLength && smallClaims(rb, body) {
			if _, out, err := rb.Decompress(body, memtest.Allocator(t)); err == nil {
				out.Release()
			}
		}
	})
}

// smallClaims reports whether the buffers of a compressed body claim less
// than a MiB each once decompressed, so that fuzzing does not allocate
// gigabytes.
func smallClaims(rb *RecordBatch, body []byte) bool {
	for _, b := range rb.Buffers {
		if b.Length > 0 && le64(body[b.Offset:]) > 1<<20 {
			return false
		}
	}
	return true
}

func TestUncompressedBytesIsWhatDecompressAllocates(t *testing.T) {
	mem, rec := checkedRecord(t, 500)
	_, batch := ipcmsgtest.Write(t, rec, ipc.WithZstd())
	rb := mustParse(t, batch.Meta)
	claimed, err := rb.UncompressedBytes(batch.Body)
	if err != nil {
		t.Fatal(err)
	}
	urb, ubody, err := rb.Decompress(batch.Body, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer ubody.Release()
	var want int64
	for _, b := range urb.Buffers {
		want += b.Length
	}
	if claimed != want || claimed == 0 {
		t.Fatalf("UncompressedBytes %d, decompressed buffers hold %d", claimed, want)
	}

	// A 1 TiB claim is refused before anything is allocated; a 1 GiB one is
	// reported as it is, for the caller to bound.
	first := rb.Buffers[0].Offset
	for _, tc := range []struct {
		claim int64
		ok    bool
	}{{1 << 40, false}, {1 << 30, true}} {
		body := bytes.Clone(batch.Body)
		binary.LittleEndian.PutUint64(body[first:], uint64(tc.claim))
		got, err := rb.UncompressedBytes(body)
		if tc.ok != (err == nil) || tc.ok && got < tc.claim {
			t.Errorf("claim of %d bytes: %d, %v", tc.claim, got, err)
		}
	}
	if _, err := rb.UncompressedBytes(batch.Body[:rb.BodyLength-1]); err == nil {
		t.Error("a short body was measured")
	}
}

// ColumnOfBuffer finds the column of every buffer of arrow-go's messages,
// also of the types IPC writes without a validity bitmap (null, unions,
// run-end encoded) and of views, whose data buffers vary in number.
func TestColumnOfBuffer(t *testing.T) {
	_, rec := checkedRecord(t, 300)
	other := arrow.NewSchema([]arrow.Field{
		{Name: "nothing", Type: arrow.Null, Nullable: true},
		{Name: "sparse", Type: arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, []arrow.UnionTypeCode{0})},
		{Name: "dense", Type: arrow.DenseUnionOf([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, []arrow.UnionTypeCode{0})},
		{Name: "runs", Type: arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64)},
		{Name: "last", Type: arrow.FixedWidthTypes.Boolean},
	}, nil)
	rec2, _, err := array.RecordFromJSON(memtest.Allocator(t), other, strings.NewReader(
		`[{"nothing": null, "sparse": [0, 1], "dense": [0, "a"], "runs": 7, "last": true}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec2.Release()
	for _, tc := range []struct {
		rec    arrow.RecordBatch
		counts func(rb *RecordBatch) []int // buffers per column
	}{
		{rec, func(rb *RecordBatch) []int { return []int{2, 2, 3, 2 + int(rb.Variadic[0]), 4, 3, 3} }},
		{rec2, func(*RecordBatch) []int { return []int{0, 1 + 2, 2 + 3, 0 + 2 + 2, 2} }},
	} {
		_, batch := ipcmsgtest.Write(t, tc.rec)
		rb := mustParse(t, batch.Meta)
		var want []int
		for c, n := range tc.counts(rb) {
			for range n {
				want = append(want, c)
			}
		}
		if len(want) != len(rb.Buffers) {
			t.Fatalf("%d buffers, the test counts %d", len(rb.Buffers), len(want))
		}
		for i, c := range want {
			if got, ok := ColumnOfBuffer(tc.rec.Schema(), rb, i); !ok || got != c {
				t.Errorf("buffer %d: column %d, %v; want %d", i, got, ok, c)
			}
		}
		if _, ok := ColumnOfBuffer(tc.rec.Schema(), rb, len(want)); ok {
			t.Errorf("a buffer past the last has a column")
		}
	}
}
