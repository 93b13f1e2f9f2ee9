package logstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// Telling a torn tail from corruption (docs/format/log-segment.md, Recovery).
//
// A crash can leave only the end of a bucket's log incomplete: one goroutine
// writes a table's frames in order and writes nothing after a failed write,
// and a power loss can only lose what was not yet synced. So a bad frame is a
// torn tail, and is cut, only when nothing after it was ever synced. It is
// corruption, and the table does not open, when either
//
//   - the last durable snapshot (writers.json) records the bucket's end past
//     the bad frame's first offset: the frame was synced, so its damage is
//     not a torn write; or
//   - an intact frame follows it anywhere in the bucket: a torn write has
//     nothing after it.

// CorruptError is the error Open returns, wrapped, for a damaged frame that
// is not a torn tail. The log is left as it was found; the operator decides
// (fluxgate repair cuts the bucket's log at Pos).
type CorruptError struct {
	Path     string // segment file
	Pos      int64  // byte position of the damaged frame in it
	Problem  string // what is wrong with the frame
	Evidence string // why it is not a torn tail
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("corrupt log segment %s at byte %d: %s, and %s", e.Path, e.Pos, e.Problem, e.Evidence)
}

// checkBadFrame decides whether the bad frame at pos of segment i is a torn
// tail (nil: the caller cuts it) or corruption (a *CorruptError).
// durableEnd is the bucket's end at the last durable snapshot.
func (b *bucket) checkBadFrame(i int, pos, durableEnd int64) error {
	s := b.mu.segments[i]
	if durableEnd > s.next {
		return s.corruptAt(pos, fmt.Sprintf("writers.json records offsets up to %d of this bucket as synced, past the frame's first offset %d", durableEnd, s.next))
	}
	for j, later := range b.mu.segments[i:] {
		from := int64(0)
		if j == 0 {
			from = pos + 1
		}
		at, err := findIntactFrame(later.f, from, later.size)
		if err != nil {
			return fmt.Errorf("look for frames after byte %d of %s: %w", pos, s.logPath, err)
		}
		if at >= 0 {
			return s.corruptAt(pos, fmt.Sprintf("an intact frame follows it at byte %d of %s", at, later.logPath))
		}
	}
	return nil
}

// corruptAt describes the bad frame at pos.
func (s *segment) corruptAt(pos int64, evidence string) *CorruptError {
	problem, err := frameProblem(s.f, pos, s.size)
	switch {
	case err != nil:
		problem = fmt.Sprintf("an unreadable frame (%v)", err)
	case problem == "":
		problem = "a frame that reads well now (a transient read error?)"
	}
	return &CorruptError{Path: s.logPath, Pos: pos, Problem: problem, Evidence: evidence}
}

// frameProblem says what is wrong with the frame at pos of a file of size
// bytes: "" when it is whole and its CRC matches.
func frameProblem(f io.ReaderAt, pos, size int64) (string, error) {
	if size-pos < fixedHeaderSize {
		return cutShort(size - pos), nil
	}
	fixed := make([]byte, fixedHeaderSize)
	if _, err := f.ReadAt(fixed, pos); err != nil {
		return "", err
	}
	h, err := parseHeader(fixed)
	switch {
	case err != nil:
		return err.Error(), nil
	case pos+int64(h.length) > size:
		return runsPastEnd(&h), nil
	}
	frame := make([]byte, h.length)
	if _, err := f.ReadAt(frame, pos); err != nil {
		return "", err
	}
	return verify(&h, frame), nil
}

func cutShort(n int64) string {
	return fmt.Sprintf("a frame header cut short (%d of %d bytes)", n, fixedHeaderSize)
}

func runsPastEnd(h *header) string {
	return fmt.Sprintf("a frame of %d bytes that runs past the end of the file", h.length)
}

// findIntactFrame returns the position of the first intact frame (header,
// length and CRC good) that starts in [from, size) of f, or -1. It reads a
// window at a time and tries every place the frame magic occurs.
func findIntactFrame(f io.ReaderAt, from, size int64) (int64, error) {
	const window = 1 << 20
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], frameMagic)
	// Windows overlap by len(magic)-1 bytes so that no magic is split.
	buf := make([]byte, window+len(magic)-1)
	for start := from; start < size; start += window {
		b := buf[:min(int64(len(buf)), size-start)]
		if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
			return -1, err
		}
		for off := 0; off < min(len(b), window); {
			k := bytes.Index(b[off:], magic[:])
			if k < 0 || off+k >= window {
				break
			}
			at := start + int64(off+k)
			problem, err := frameProblem(f, at, size)
			if err != nil {
				return -1, err
			}
			if problem == "" {
				return at, nil
			}
			off += k + 1
		}
	}
	return -1, nil
}
