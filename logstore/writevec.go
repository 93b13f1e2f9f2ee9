package logstore

import (
	"io"
	"os"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"
)

// writeVecAt writes bufs back to back at off. A file of the real disk takes
// them in one pwritev, without first copying them into one buffer; any
// other file (one that errorfs wraps, so that a test's faults reach each
// write, or vfs.NewMem's) takes them one WriteAt each.
func writeVecAt(f vfs.File, bufs [][]byte, off int64) error {
	if c, ok := f.(syscall.Conn); ok {
		return pwritev(c, bufs, off)
	}
	for _, b := range bufs {
		if _, err := f.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
	}
	return nil
}

// maxIovecs is the most buffers one pwritev takes (IOV_MAX on Linux).
const maxIovecs = 1024

func pwritev(c syscall.Conn, bufs [][]byte, off int64) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	for len(bufs) > 0 {
		batch := bufs[:min(len(bufs), maxIovecs)]
		var n int
		var werr error
		if err := rc.Write(func(fd uintptr) bool {
			n, werr = unix.Pwritev(int(fd), batch, off)
			return werr != unix.EAGAIN
		}); err != nil {
			return err
		}
		if werr != nil {
			return os.NewSyscallError("pwritev", werr)
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		off += int64(n)
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
