package ipcmsg

import (
	"bytes"
	"encoding/binary"
	"io"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg/ipcmsgtest"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// FuzzDecompressBuffer: a compressed buffer, as a writer sends it (its
// claimed length, then ZSTD or LZ4 frames), is refused, or Decompress gives
// exactly the bytes it claims and what a plain decoder of its codec reads
// (klauspost's DecodeAll, pierrec's reader); never a panic. The intake
// checks every compressed batch with Decompress.
func FuzzDecompressBuffer(f *testing.F) {
	src := lz4Input(3000) // small seeds: minimizing what it finds takes time in their size
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		f.Fatal(err)
	}
	zstdFrame := func(b []byte) []byte { return enc.EncodeAll(b, nil) }
	plain, err := zstd.NewReader(nil) // klauspost's defaults, not the shared decoder's
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []struct {
		codec Codec
		frame []byte
	}{
		{CodecZstd, zstdFrame(src)},
		{CodecZstd, append(zstdFrame(src[:1000]), zstdFrame(src[1000:])...)}, // frames concatenated, as the log compresses large buffers
		{CodecLZ4Frame, AppendLZ4Frame(nil, src)},
		{CodecLZ4Frame, pierrecFrame(f, src)},
	} {
		f.Add(uint8(seed.codec), int64(len(src)), seed.frame)
	}
	f.Add(uint8(CodecZstd), int64(-1), src[:100]) // stored as it is
	f.Fuzz(func(t *testing.T, codec uint8, claim int64, frame []byte) {
		c := Codec(codec % 2) // LZ4 frames or ZSTD
		if claim > 1<<20 {
			return
		}
		body := binary.LittleEndian.AppendUint64(nil, uint64(claim))
		body = append(body, frame...)
		rb := &RecordBatch{Length: 1, Nodes: []Node{{Length: 1}}, Buffers: []Buffer{{Offset: 0, Length: int64(len(body))}}, Codec: c, BodyLength: int64(len(body))}
		out, buf, err := rb.Decompress(body, memtest.Allocator(t))
		if err != nil {
			return
		}
		defer buf.Release()
		got := buf.Bytes()[out.Buffers[0].Offset:][:out.Buffers[0].Length]
		want := frame
		switch {
		case claim == -1:
		case c == CodecZstd:
			want, err = plain.DecodeAll(frame, nil)
		default:
			want, err = io.ReadAll(lz4.NewReader(bytes.NewReader(frame)))
		}
		if err != nil || !bytes.Equal(got, want) || (claim >= 0 && int64(len(got)) != claim) {
			t.Fatalf("%s claiming %d: decompressed %d bytes; a plain decoder reads %d (equal: %v), %v", c, claim, len(got), len(want), bytes.Equal(got, want), err)
		}
	})
}

// A ZSTD frame whose header claims more than its buffer's length is refused
// without allocating what it claims: klauspost's DecodeAll allocated a
// frame's content size up front, so 23 bytes claiming 60 GiB were a fatal
// out of memory. (1 GiB here, so that a regression fails rather than kills
// the test.)
func TestDecompressRefusesAZstdFrameClaimingMore(t *testing.T) {
	body := binary.LittleEndian.AppendUint64(nil, 3)
	body = append(body, ipcmsgtest.ZstdFrameClaiming(1<<30, []byte("abc"))...)
	rb := &RecordBatch{Length: 1, Nodes: []Node{{Length: 1}}, Buffers: []Buffer{{Offset: 0, Length: int64(len(body))}}, Codec: CodecZstd, BodyLength: int64(len(body))}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, buf, err := rb.Decompress(body, memtest.Allocator(t))
	runtime.ReadMemStats(&after)
	if err == nil {
		buf.Release()
		t.Fatal("a frame claiming 1 GiB decompressed into a 3-byte buffer")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Fatalf("refusing it allocated %d MiB", n>>20)
	}
}
