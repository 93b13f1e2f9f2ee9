package logstore

import (
	"bytes"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// writeVecAt writes more pieces than one pwritev takes, on the real disk
// (pwritev) and on vfs.NewMem (a WriteAt each), at an offset.
func TestWriteVecAt(t *testing.T) {
	for _, fs := range []vfs.FS{vfs.Default, vfs.NewMem()} {
		name := filepath.Join(t.TempDir(), "0.log")
		if err := fs.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := fs.OpenReadWrite(name, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := f.(syscall.Conn); ok != (fs == vfs.Default) {
			t.Fatalf("%T: pwritev taken %v, want it for the real disk only", fs, ok)
		}
		var bufs [][]byte
		var want []byte
		for i := range maxIovecs + 500 {
			b := fmt.Appendf(nil, "<%d>", i)
			bufs = append(bufs, b)
			want = append(want, b...)
		}
		const at = 7
		if err := writeVecAt(f, bufs, at); err != nil {
			t.Fatalf("%T: %v", fs, err)
		}
		got := make([]byte, at+len(want))
		if _, err := f.ReadAt(got, 0); err != nil {
			t.Fatalf("%T: %v", fs, err)
		}
		if !bytes.Equal(got[at:], want) {
			t.Fatalf("%T: read back differs from what was written", fs)
		}
		f.Close()
	}
}
