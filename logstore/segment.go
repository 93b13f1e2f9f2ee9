package logstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/internal/fsio"
)

// A segment is one log file of a bucket and its sparse index. Frames are only
// appended to the active (last) segment; the others are immutable until
// retention removes them whole.
//
// The index file holds 24-byte entries (offset, file position, commit time),
// one per IndexIntervalBytes of log, so it serves both as the offset index and
// as the time index: commit times never decrease within a bucket.
type segment struct {
	fs        vfs.FS
	base      int64
	logPath   string
	indexPath string
	f         *cachedFile

	// Guarded by the table's append lock for writers. Readers only look at
	// bytes below the high watermark, which never move once written.
	size        int64
	next        int64 // offset after the last frame
	maxTs       int64
	lastIndexed int64 // file position of the last index entry, -1 if none
	interval    int64 // bytes of log between index entries

	// summary merges the statistics of every frame so far (see
	// Options.Summarize). Guarded by appendMu.
	summary     []byte
	summaryLost bool // a frame had no statistics: no summary
	summaryRows int64

	mu struct {
		sync.Mutex
		index   []indexEntry
		refs    int
		removed bool
		// Set when the segment is sealed (no more appends): what readers
		// need to pass over it whole.
		sealed  bool
		next    int64
		rows    int64
		summary []byte
	}
	idx *cachedFile // index file, appended to as frames arrive
}

type indexEntry struct {
	offset int64
	pos    int64
	ts     int64
}

const indexEntrySize = 24

func segmentName(base int64) string { return fmt.Sprintf("%020d", base) }

// listSegments returns the base offsets of the segments in dir, ascending.
func listSegments(fsys vfs.FS, dir string) ([]int64, error) {
	names, err := fsys.List(dir)
	if err != nil {
		return nil, err
	}
	var bases []int64
	for _, file := range names {
		name, ok := strings.CutSuffix(file, ".log")
		if !ok {
			continue
		}
		base, err := strconv.ParseInt(name, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("unexpected log file %s in %s", file, dir)
		}
		bases = append(bases, base)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	return bases, nil
}

// openSegment opens (creating if needed) the segment with base offset base,
// its files through files. It does not read it; see load and recover.
func openSegment(fsys vfs.FS, files *FileCache, dir string, base, indexInterval int64) (*segment, error) {
	s := &segment{
		fs:          fsys,
		base:        base,
		interval:    indexInterval,
		logPath:     filepath.Join(dir, segmentName(base)+".log"),
		indexPath:   filepath.Join(dir, segmentName(base)+".index"),
		next:        base,
		lastIndexed: -1,
	}
	var err error
	if s.f, err = openCached(files, fsys, s.logPath, true); err != nil {
		return nil, err
	}
	if s.idx, err = openCached(files, fsys, s.indexPath, false); err != nil {
		s.f.Close()
		return nil, err
	}
	st, err := s.f.Stat()
	if err != nil {
		s.close()
		return nil, err
	}
	s.size = st.Size()
	return s, nil
}

// loadIndex reads the index file of an immutable segment and derives the
// segment's end from its last frame. A missing or damaged index is rebuilt by
// scanning the log.
func (s *segment) loadIndex() error {
	entries, err := readIndex(s.idx, s.size, s.base)
	if err == nil && len(entries) > 0 {
		last := entries[len(entries)-1]
		// Walk the frames after the last entry to find the segment's end.
		next, maxTs := last.offset, last.ts
		end, err := scanFrames(s.f, last.pos, s.size, false, func(h *header, _ int64, _ []byte) error {
			next, maxTs = h.nextOffset(), h.commitTs
			return nil
		})
		if err == nil && end == s.size {
			s.mu.index, s.next, s.maxTs = entries, next, maxTs
			s.lastIndexed = last.pos
			return nil
		}
	}
	if s.size == 0 {
		return nil
	}
	valid, err := s.rebuild(false, nil, nil)
	if err != nil {
		return err
	}
	if valid < s.size {
		// Only sealed segments get here: recovery scanned newer ones and found intact frames.
		return s.corruptAt(valid, "it is in a sealed segment, which intact frames of newer segments follow")
	}
	return nil
}

// rebuild rescans the log (verifying CRCs when asked), rewrites the index and
// returns the position after the last good frame: the file's size when every
// frame is good. It cuts nothing; what a bad frame means is recovery's call.
// Each good frame is also passed to fn, if not nil. The segment's summary is
// made again from the good frames' statistics when they are verified and
// merge is given; without, it is unknown.
func (s *segment) rebuild(verifyCRC bool, merge func(a, b []byte) []byte, fn func(h *header, pos int64, frame []byte)) (valid int64, err error) {
	s.mu.index = s.mu.index[:0]
	s.next, s.maxTs, s.lastIndexed = s.base, 0, -1
	s.summary, s.summaryLost, s.summaryRows = nil, false, 0
	if err := s.idx.Truncate(0); err != nil {
		return 0, err
	}
	size := s.size
	valid, err = scanFrames(s.f, 0, size, verifyCRC, func(h *header, pos int64, frame []byte) error {
		if fn != nil {
			fn(h, pos, frame)
		}
		if frame != nil && merge != nil {
			s.summarize(h.stats(frame), int64(h.recordCount), merge)
		} else {
			s.summary, s.summaryLost = nil, true
		}
		return s.noteAppended(h, pos)
	})
	s.size = size // noteAppended moved it to the last good frame's end
	return valid, err
}

// truncate cuts the log at pos, dropping index entries beyond it.
func (s *segment) truncate(pos int64) error {
	if err := s.f.Truncate(pos); err != nil {
		return fmt.Errorf("truncate %s: %w", s.logPath, err)
	}
	s.size = pos
	s.mu.Lock()
	i := sort.Search(len(s.mu.index), func(i int) bool { return s.mu.index[i].pos >= pos })
	s.mu.index = s.mu.index[:i]
	s.mu.Unlock()
	if err := s.idx.Truncate(int64(i) * indexEntrySize); err != nil {
		return err
	}
	if i > 0 {
		s.lastIndexed = s.mu.index[i-1].pos
	} else {
		s.lastIndexed = -1
	}
	return nil
}

// noteAppended records a frame written at pos, adding an index entry every
// interval bytes (and for the first frame).
func (s *segment) noteAppended(h *header, pos int64) error {
	s.size = pos + int64(h.length)
	s.next = h.nextOffset()
	s.maxTs = max(s.maxTs, h.commitTs)
	if s.lastIndexed >= 0 && pos-s.lastIndexed < s.interval {
		return nil
	}
	e := indexEntry{offset: h.baseOffset, pos: pos, ts: h.commitTs}
	var b [indexEntrySize]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(e.offset))
	binary.LittleEndian.PutUint64(b[8:], uint64(e.pos))
	binary.LittleEndian.PutUint64(b[16:], uint64(e.ts))
	s.mu.Lock()
	n := len(s.mu.index)
	s.mu.index = append(s.mu.index, e)
	s.mu.Unlock()
	s.lastIndexed = pos
	// The index is a hint rebuilt on recovery; it is written but never synced.
	if _, err := s.idx.WriteAt(b[:], int64(n)*indexEntrySize); err != nil {
		return fmt.Errorf("write index %s: %w", s.indexPath, err)
	}
	return nil
}

// seekOffset returns the file position of the last indexed frame at or before
// offset; the frame holding offset is found by scanning forward from there.
func (s *segment) seekOffset(offset int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.Search(len(s.mu.index), func(i int) bool { return s.mu.index[i].offset > offset })
	if i == 0 {
		return 0
	}
	return s.mu.index[i-1].pos
}

// seekTime returns the file position, and the offset of the frame there,
// from which to scan for the first frame whose commit time is at least ts.
func (s *segment) seekTime(ts int64) (pos, offset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.Search(len(s.mu.index), func(i int) bool { return s.mu.index[i].ts >= ts })
	if i == 0 {
		return 0, s.base
	}
	return s.mu.index[i-1].pos, s.mu.index[i-1].offset
}

// summarize folds a frame's statistics into the segment's summary. Frames
// without rows tell nothing; one without statistics makes the summary
// unknown for good.
func (s *segment) summarize(stats []byte, rows int64, merge func(a, b []byte) []byte) {
	switch {
	case rows == 0 || s.summaryLost:
	case len(stats) == 0:
		s.summary, s.summaryLost = nil, true
	case s.summary == nil:
		s.summary = append([]byte(nil), stats...)
	default:
		s.summary = merge(s.summary, stats)
		s.summaryLost = s.summary == nil
	}
	s.summaryRows += rows
}

// summaryPath is the file that keeps a sealed segment's summary. It is a
// hint, checked against the log (its end offset) and its own CRC.
func (s *segment) summaryPath() string {
	return strings.TrimSuffix(s.logPath, ".log") + ".summary"
}

// A summary file holds the segment's end offset and row count (8 bytes
// each, big-endian), the CRC-32C of those and of the summary (4 bytes,
// big-endian), then the summary.
const summaryHeaderSize = 20

func encodeSummary(next, rows int64, summary []byte) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(next))
	b = binary.BigEndian.AppendUint64(b, uint64(rows))
	crc := crc32.Update(crc32.Checksum(b, castagnoli), castagnoli, summary)
	b = binary.BigEndian.AppendUint32(b, crc)
	return append(b, summary...)
}

// decodeSummary reads a summary file; ok is false when it is damaged, or
// was written before summary files had a CRC.
func decodeSummary(b []byte) (next, rows int64, summary []byte, ok bool) {
	if len(b) <= summaryHeaderSize {
		return 0, 0, nil, false
	}
	summary = b[summaryHeaderSize:]
	crc := crc32.Update(crc32.Checksum(b[:16], castagnoli), castagnoli, summary)
	if crc != binary.BigEndian.Uint32(b[16:]) {
		return 0, 0, nil, false
	}
	return int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:])), summary, true
}

// seal marks the segment complete and publishes its summary to readers,
// writing it beside the log so that the next open has it too.
func (s *segment) seal() error {
	summary := s.publish()
	if summary == nil {
		return nil
	}
	return fsio.WriteFile(s.fs, s.summaryPath(), encodeSummary(s.next, s.summaryRows, summary), 0o644)
}

// publish marks the segment sealed and returns its summary, nil when
// unknown.
func (s *segment) publish() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	summary := s.summary
	if s.summaryLost {
		summary = nil
	}
	s.mu.sealed, s.mu.next, s.mu.rows, s.mu.summary = true, s.next, s.summaryRows, summary
	return summary
}

// loadSummary seals a segment found on open, with its summary file if that
// is intact and describes the log as it is. Without one, a summary that
// recovery made by reading the segment is written.
func (s *segment) loadSummary() error {
	if b, err := fsio.ReadFile(s.fs, s.summaryPath()); err == nil {
		if next, rows, summary, ok := decodeSummary(b); ok && next == s.next {
			s.summary, s.summaryRows, s.summaryLost = summary, rows, false
			s.publish()
			return nil
		}
	}
	return s.seal()
}

// sealedSummary returns, for a sealed segment, its end offset, row count and
// summary (nil when unknown).
func (s *segment) sealedSummary() (sealed bool, next, rows int64, summary []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.sealed, s.mu.next, s.mu.rows, s.mu.summary
}

// acquire takes a reference for a reader; it fails once the segment is removed.
func (s *segment) acquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.removed {
		return false
	}
	s.mu.refs++
	return true
}

func (s *segment) release() {
	s.mu.Lock()
	s.mu.refs--
	done := s.mu.removed && s.mu.refs == 0
	s.mu.Unlock()
	if done {
		s.close()
	}
}

// remove deletes the segment's files; open readers keep reading the unlinked
// file until they release it. The log file is held open first, readers or
// not, so that a reader that finds the segment meanwhile reads it too rather
// than reopen it (which would create it again: see cachedFile.open). The
// index file is written only by appends, which never reach a removed segment.
func (s *segment) remove() error {
	s.f.keepOpen()
	err := errors.Join(s.fs.Remove(s.logPath), s.fs.Remove(s.indexPath))
	if rmErr := s.fs.Remove(s.summaryPath()); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	s.retire()
	return err
}

// retire lets the segment go without deleting its files: new readers no
// longer find it, open ones read on until they release it.
func (s *segment) retire() {
	s.mu.Lock()
	s.mu.removed = true
	done := s.mu.refs == 0
	s.mu.Unlock()
	if done {
		s.close()
	}
}

func (s *segment) close() error {
	return errors.Join(s.f.Close(), s.idx.Close())
}

func readIndex(f *cachedFile, logSize, base int64) ([]indexEntry, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	n := st.Size() / indexEntrySize
	buf := make([]byte, n*indexEntrySize)
	if _, err := f.ReadAt(buf, 0); err != nil && err != io.EOF {
		return nil, err
	}
	entries := make([]indexEntry, 0, n)
	for i := range n {
		b := buf[i*indexEntrySize:]
		e := indexEntry{
			offset: int64(binary.LittleEndian.Uint64(b[0:])),
			pos:    int64(binary.LittleEndian.Uint64(b[8:])),
			ts:     int64(binary.LittleEndian.Uint64(b[16:])),
		}
		if e.offset < base || e.pos >= logSize || (i > 0 && (e.pos <= entries[i-1].pos || e.offset <= entries[i-1].offset)) {
			return nil, fmt.Errorf("index %s: entry %d out of order", f.Name(), i)
		}
		entries = append(entries, e)
	}
	if len(entries) > 0 && entries[0].pos != 0 {
		return nil, fmt.Errorf("index %s: first entry at %d", f.Name(), entries[0].pos)
	}
	return entries, nil
}

// scanFrames reads the frames of f in [start, end) in order, calling fn for
// each whole (and, with verifyCRC, intact) frame; with verifyCRC fn also gets
// the frame's bytes, valid until it returns. It stops at the first frame
// that is torn or corrupt and returns its position, which is end when all
// frames were good.
func scanFrames(f io.ReaderAt, start, end int64, verifyCRC bool, fn func(h *header, pos int64, frame []byte) error) (int64, error) {
	// No bigger than the bytes read: recovery scans every bucket's tail.
	r := bufio.NewReaderSize(io.NewSectionReader(f, start, end-start), int(min(end-start, 1<<20)))
	pos := start
	var buf []byte
	for pos < end {
		fixed, err := r.Peek(fixedHeaderSize)
		if err != nil {
			return pos, nil // torn header
		}
		h, err := parseHeader(fixed)
		if err != nil || pos+int64(h.length) > end {
			return pos, nil
		}
		var frame []byte
		if verifyCRC {
			if cap(buf) < int(h.length) {
				buf = make([]byte, h.length)
			}
			buf = buf[:h.length]
			if _, err := io.ReadFull(r, buf); err != nil || verify(&h, buf) != "" {
				return pos, nil
			}
			frame = buf
		} else if _, err := r.Discard(int(h.length)); err != nil {
			return pos, nil
		}
		if err := fn(&h, pos, frame); err != nil {
			return pos, err
		}
		pos += int64(h.length)
	}
	return pos, nil
}
