package logstore

import (
	"runtime"
	"testing"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg/ipcmsgtest"
)

// A stored ZSTD body whose frame header claims more than the body's length
// is an error, not an allocation of what it claims (klauspost's DecodeAll
// allocated a frame's content size up front).
func TestDecompressRefusesAZstdFrameClaimingMore(t *testing.T) {
	frame := ipcmsgtest.ZstdFrameClaiming(1<<30, []byte("abc"))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := decompress(CodecZstd, frame, make([]byte, 3, 3+decompressSlack))
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a frame claiming 1 GiB decompressed into 3 bytes")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Fatalf("refusing it allocated %d MiB", n>>20)
	}
}
