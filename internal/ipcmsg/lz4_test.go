package ipcmsg

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// lz4Input is data of every kind a buffer holds: runs that compress, bytes
// that do not, and more than one 4 MiB block.
func lz4Input(n int) []byte {
	out := make([]byte, 0, n)
	x := uint32(1)
	for i := 0; len(out) < n; i++ {
		if i%2 == 0 {
			out = fmt.Appendf(out, "row %07d;", i)
		} else {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			out = append(out, byte(x), byte(x>>8), byte(x>>16))
		}
	}
	return out[:n]
}

// TestLZ4FrameRoundTripsWithPierrec checks frames both ways against the
// frame reader and writer arrow-go's IPC codec uses.
func TestLZ4FrameRoundTripsWithPierrec(t *testing.T) {
	for _, n := range []int{1, 100, 70_000, lz4BlockBytes + 12345} {
		src := lz4Input(n)
		frame := AppendLZ4Frame(nil, src)
		got, err := io.ReadAll(lz4.NewReader(bytes.NewReader(frame)))
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("%d bytes: pierrec read %d bytes back, %v", n, len(got), err)
		}

		var theirs bytes.Buffer
		w := lz4.NewWriter(&theirs)
		if err := w.Apply(lz4.ChecksumOption(true), lz4.BlockChecksumOption(true), lz4.SizeOption(uint64(n))); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(src); err != nil || w.Close() != nil {
			t.Fatal(err)
		}
		dst := make([]byte, n)
		if err := DecodeLZ4Frame(theirs.Bytes(), dst); err != nil || !bytes.Equal(dst, src) {
			t.Fatalf("%d bytes: decoding pierrec's frame (checksums, content size): %v", n, err)
		}
	}
}

// TestLZ4FrameReadsPyarrowLinkedBlocks reads a frame of pyarrow's
// (pa.compress(data, codec="lz4"): LZ4F's defaults, 64 KiB blocks that
// refer back into the blocks before them).
func TestLZ4FrameReadsPyarrowLinkedBlocks(t *testing.T) {
	frame, err := os.ReadFile("testdata/pyarrow-lz4-linked.lz4")
	if err != nil {
		t.Fatal(err)
	}
	if frame[4]&lz4FlagIndependent != 0 {
		t.Fatal("the fixture's blocks are independent; it tests nothing")
	}
	var want []byte
	for i := range 10000 {
		want = fmt.Appendf(want, "row %07d value %d;", i, i%13)
	}
	got := make([]byte, len(want))
	if err := DecodeLZ4Frame(frame, got); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("decoded %v", err)
	}
}

func TestLZ4FrameRejectsCorruptFrames(t *testing.T) {
	src := lz4Input(10_000)
	frame := AppendLZ4Frame(nil, src)
	for name, tc := range map[string]struct {
		frame []byte
		n     int
	}{
		"truncated":    {frame[:len(frame)-5], len(src)},
		"no end mark":  {frame[:len(frame)-4], len(src)},
		"bad magic":    {append([]byte{0}, frame[1:]...), len(src)},
		"longer claim": {frame, len(src) + 1},
		"short claim":  {frame, len(src) - 1},
	} {
		if err := DecodeLZ4Frame(tc.frame, make([]byte, tc.n)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

func FuzzDecodeLZ4Frame(f *testing.F) {
	f.Add(AppendLZ4Frame(nil, lz4Input(1000)), 1000)
	f.Fuzz(func(t *testing.T, frame []byte, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		_ = DecodeLZ4Frame(frame, make([]byte, n)) // must not panic
	})
}
