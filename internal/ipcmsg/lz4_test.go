package ipcmsg

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
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

// TestLZ4FrameRefusesForgedFrames: each frame that LZ4F (pyarrow) or
// pierrec (arrow-go) would refuse is refused, by the check its name says.
func TestLZ4FrameRefusesForgedFrames(t *testing.T) {
	const n = 200_000 // four 64 KiB blocks
	src := lz4Input(n)
	full := pierrecFrame(t, src) // header, block and content checksums, content size
	if err := DecodeLZ4Frame(full, make([]byte, n)); err != nil {
		t.Fatalf("the frame the variants are made of: %v", err)
	}
	firstBlock := 15 + 4 + int(binary.LittleEndian.Uint32(full[15:])&^lz4Uncompressed) // its checksum
	ours := AppendLZ4Frame(nil, src)                                                   // one block of n bytes
	compressible := bytes.Repeat([]byte("fluxgate"), n/8)
	for _, tc := range []struct {
		name, want string
		frame      []byte
		n          int
	}{
		{"header checksum", "header checksum", forged(full, func(f []byte) { f[14] ^= 1 }), n},
		{"block checksum", "block checksum", forged(full, func(f []byte) { f[firstBlock] ^= 1 }), n},
		{"content checksum", "content checksum", forged(full, func(f []byte) { f[len(f)-1] ^= 1 }), n},
		{"content size larger", "content size", rehashed(full, func(f []byte) { binary.LittleEndian.PutUint64(f[6:], n+1) }), n},
		{"content size smaller", "content size", rehashed(full, func(f []byte) { binary.LittleEndian.PutUint64(f[6:], n-1) }), n},
		{"reserved FLG bit", "reserved bits", rehashed(full, func(f []byte) { f[4] |= lz4FlagReserved }), n},
		{"reserved BD high bit", "reserved bits", rehashed(full, func(f []byte) { f[5] |= 0x80 }), n},
		{"reserved BD low bits", "reserved bits", rehashed(full, func(f []byte) { f[5] |= 0x01 }), n},
		{"version 2", "version 2", rehashed(full, func(f []byte) { f[4] = f[4]&0x3F | 0x80 }), n},
		{"block size id 3", "block size id 3", rehashed(full, func(f []byte) { f[5] = 0x30 }), n},
		{"block over the block size", "over the frame's block size", rehashed(ours, func(f []byte) { f[5] = 0x40 }), n},
		{"block decompresses past the block size", "lz4 frame: lz4", rehashed(AppendLZ4Frame(nil, compressible), func(f []byte) { f[5] = 0x40 }), len(compressible)},
		{"dictionary id", "dictionary", rehashed(slices.Concat(full[:14], []byte{1, 2, 3, 4}, full[14:]), func(f []byte) { f[4] |= lz4FlagDictID }), n},
		{"two frames", "after the end of the frame", slices.Concat(ours, ours), 2 * n},
		{"a frame after an empty one", "after the end of the frame", slices.Concat(AppendLZ4Frame(nil, nil), full), n},
		{"bytes after the frame", "after the end of the frame", slices.Concat(full, []byte{0}), n},
		{"skippable frame first", "bad magic", slices.Concat([]byte{0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4}, full), n},
		{"no frame", "bad magic", nil, 0},
		{"truncated", "truncated", full[:len(full)-5], n},
		{"no end mark", "truncated", ours[:len(ours)-4], n},
		{"longer claim", "want 200001", ours, n + 1},
		{"shorter claim", "lz4 frame: lz4", ours, n - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := DecodeLZ4Frame(tc.frame, make([]byte, tc.n))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// pierrecFrame is src as pierrec's writer frames it with every option: 64
// KiB blocks, their checksums, the content checksum and the content size.
func pierrecFrame(t testing.TB, src []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := lz4.NewWriter(&out)
	err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(true), lz4.BlockChecksumOption(true), lz4.SizeOption(uint64(len(src))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(src); err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// forged returns a copy of frame changed by edit.
func forged(frame []byte, edit func(f []byte)) []byte {
	f := bytes.Clone(frame)
	edit(f)
	return f
}

// rehashed is forged with the header checksum made right for the changed
// header, so that only the change is wrong.
func rehashed(frame []byte, edit func(f []byte)) []byte {
	f := forged(frame, edit)
	end := 6
	if f[4]&lz4FlagContentSize != 0 {
		end += 8
	}
	if f[4]&lz4FlagDictID != 0 {
		end += 4
	}
	f[end] = byte(xxh32(f[4:end]) >> 8)
	return f
}

// xxh32 against the reference implementation's values.
func TestXXH32(t *testing.T) {
	for in, want := range map[string]uint32{
		"":    0x02CC5D05,
		"a":   0x550D7456,
		"abc": 0x32D153FF,
		"Nobody inspects the spammish repetition": 0xE2293B2F,
	} {
		if got := xxh32([]byte(in)); got != want {
			t.Errorf("xxh32(%q) = %#x, want %#x", in, got, want)
		}
	}
}

// FuzzDecodeLZ4Frame: a frame is refused, or it decodes to what pierrec's
// reader (arrow-go's) reads of it; never a panic. Its seeds are small, as
// minimizing what it finds takes time in their size; testdata/fuzz holds a
// small frame of pyarrow's with linked blocks.
func FuzzDecodeLZ4Frame(f *testing.F) {
	f.Add(AppendLZ4Frame(nil, lz4Input(1000)), 1000)
	f.Add(pierrecFrame(f, lz4Input(2000)), 2000)
	f.Fuzz(func(t *testing.T, frame []byte, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		dst := make([]byte, n)
		if DecodeLZ4Frame(frame, dst) != nil {
			return
		}
		got, err := io.ReadAll(lz4.NewReader(bytes.NewReader(frame)))
		if err != nil || !bytes.Equal(got, dst) {
			t.Fatalf("decoded %d bytes; pierrec reads %d bytes (equal: %v), %v", n, len(got), bytes.Equal(got, dst), err)
		}
	})
}

// BenchmarkDecodeLZ4Frame decodes a 1 MiB buffer framed as the Go client and
// the log frame it (one 4 MiB block, no checksums) and as pierrec's writer
// does with both checksums (arrow-go's writer sets the content checksum).
func BenchmarkDecodeLZ4Frame(b *testing.B) {
	src := lz4Input(1 << 20)
	var theirs bytes.Buffer
	w := lz4.NewWriter(&theirs)
	if err := w.Apply(lz4.ChecksumOption(true), lz4.BlockChecksumOption(true)); err != nil {
		b.Fatal(err)
	}
	if _, err := w.Write(src); err != nil || w.Close() != nil {
		b.Fatal(err)
	}
	dst := make([]byte, len(src))
	for _, tc := range []struct {
		name  string
		frame []byte
	}{{"ours", AppendLZ4Frame(nil, src)}, {"checksums", theirs.Bytes()}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if err := DecodeLZ4Frame(tc.frame, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
