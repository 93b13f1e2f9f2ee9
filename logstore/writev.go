package logstore

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// maxIovecs is the most buffers one pwritev takes (IOV_MAX on Linux).
const maxIovecs = 1024

// writeVec writes bufs back to back at pos with vectored writes, so that a
// frame's columns reach the page cache without being copied into one buffer
// first.
func writeVec(f *os.File, bufs [][]byte, pos int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	for len(bufs) > 0 {
		batch := bufs[:min(len(bufs), maxIovecs)]
		var n int
		var werr error
		if err := rc.Write(func(fd uintptr) bool {
			n, werr = unix.Pwritev(int(fd), batch, pos)
			return werr != unix.EAGAIN
		}); err != nil {
			return err
		}
		if werr != nil {
			return werr
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		pos += int64(n)
		bufs = advance(bufs, n)
	}
	return nil
}

// advance drops the first n bytes of bufs.
func advance(bufs [][]byte, n int) [][]byte {
	for n > 0 && len(bufs) > 0 {
		if n < len(bufs[0]) {
			bufs[0] = bufs[0][n:]
			return bufs
		}
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	for len(bufs) > 0 && len(bufs[0]) == 0 {
		bufs = bufs[1:]
	}
	return bufs
}
