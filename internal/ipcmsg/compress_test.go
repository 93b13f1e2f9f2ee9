package ipcmsg

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg/ipcmsgtest"
)

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
	_, buf, err := rb.Decompress(body, memory.DefaultAllocator)
	runtime.ReadMemStats(&after)
	if err == nil {
		buf.Release()
		t.Fatal("a frame claiming 1 GiB decompressed into a 3-byte buffer")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Fatalf("refusing it allocated %d MiB", n>>20)
	}
}
