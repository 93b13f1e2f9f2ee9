package logstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/internal/fsio"
)

// RepairPlan is what cutting one bucket's log at a byte of one of its
// segments removes: the segment's bytes from there on and every newer
// segment of the bucket. The log of a table that does not open because of a
// CorruptError is repaired by cutting it at the error's position; the
// operator chooses to (fluxgate repair), with the server stopped.
type RepairPlan struct {
	Bucket   int
	Earliest int64  // the bucket's first retained offset
	Segment  string // the segment file cut
	Pos      int64  // where it is cut: the first byte removed
	Size     int64  // its size before
	Frames   int    // intact frames kept in it
	KeptEnd  int64  // the bucket's log end offset after the cut
	Newer    []string
	// Writers is the table's writers.json, moved aside too: it may record
	// ends past the cut. The next open rebuilds the writer table from the
	// log.
	Writers string
}

// PlanRepair checks that pos is where a frame of the segment file path of the
// table log in dir starts, every frame before it intact, and returns what
// cutting there removes. It changes nothing.
func PlanRepair(dir string, buckets int, path string, pos int64) (*RepairPlan, error) {
	bucket, base, err := segmentOf(dir, buckets, path)
	if err != nil {
		return nil, err
	}
	logDir := filepath.Dir(path)
	f, err := vfs.Default.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if pos < 0 || pos > st.Size() {
		return nil, fmt.Errorf("byte %d is outside %s (%d bytes)", pos, path, st.Size())
	}
	p := &RepairPlan{Bucket: bucket, Segment: path, Pos: pos, Size: st.Size(), KeptEnd: base}
	end, err := scanFrames(f, 0, pos, true, func(h *header, _ int64, _ []byte) error {
		p.Frames++
		p.KeptEnd = h.nextOffset()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if end != pos {
		return nil, fmt.Errorf("byte %d of %s is not where a frame starts after intact frames: they end at byte %d", pos, path, end)
	}
	bases, err := listSegments(vfs.Default, logDir)
	if err != nil {
		return nil, err
	}
	p.Earliest = bases[0]
	for _, b := range bases {
		if b > base {
			p.Newer = append(p.Newer, filepath.Join(logDir, segmentName(b)+".log"))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, writersFile)); err == nil {
		p.Writers = filepath.Join(dir, writersFile)
	}
	return p, nil
}

// Apply carries the plan out, moving what it removes into dest (created):
// the cut bytes as <bucket>/<segment>.from-<pos>, the newer segments' files
// and writers.json as they are. The cut segment's summary goes too (it
// describes the segment before the cut); its index is rebuilt on open.
func (p *RepairPlan) Apply(dest string) error {
	bdir := filepath.Join(dest, strconv.Itoa(p.Bucket))
	if err := os.MkdirAll(bdir, 0o755); err != nil {
		return err
	}
	if err := copyTail(p.Segment, p.Pos, filepath.Join(bdir, fmt.Sprintf("%s.from-%d", filepath.Base(p.Segment), p.Pos))); err != nil {
		return err
	}
	moves := [][2]string{}
	for _, seg := range p.Newer {
		stem := strings.TrimSuffix(seg, ".log")
		for _, ext := range []string{".log", ".index", ".summary"} {
			moves = append(moves, [2]string{stem + ext, filepath.Join(bdir, filepath.Base(stem)+ext)})
		}
	}
	stem := strings.TrimSuffix(p.Segment, ".log")
	moves = append(moves, [2]string{stem + ".summary", filepath.Join(bdir, filepath.Base(stem)+".summary")})
	if p.Writers != "" {
		moves = append(moves, [2]string{p.Writers, filepath.Join(dest, writersFile)})
	}
	for _, m := range moves {
		if err := os.Rename(m[0], m[1]); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := os.Truncate(p.Segment, p.Pos); err != nil {
		return err
	}
	f, err := os.OpenFile(p.Segment, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = errors.Join(f.Sync(), f.Close())
	for _, d := range []string{filepath.Dir(p.Segment), filepath.Dir(filepath.Dir(filepath.Dir(p.Segment))), bdir, dest} {
		err = errors.Join(err, fsio.SyncDir(vfs.Default, d))
	}
	return err
}

// segmentOf checks that path is a segment file of the table log in dir and
// returns its bucket and base offset.
func segmentOf(dir string, buckets int, path string) (bucket int, base int64, err error) {
	rel, err := filepath.Rel(dir, path)
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if err != nil || len(parts) != 3 || parts[1] != "log" {
		return 0, 0, fmt.Errorf("%s is not a log segment of the table, whose segments are %s", path, filepath.Join(dir, "<bucket>", "log", "<base offset>.log"))
	}
	bucket, err = strconv.Atoi(parts[0])
	if err != nil || bucket < 0 || bucket >= buckets {
		return 0, 0, fmt.Errorf("%s: %q is not a bucket of the table (it has %d)", path, parts[0], buckets)
	}
	name, ok := strings.CutSuffix(parts[2], ".log")
	if base, err = strconv.ParseInt(name, 10, 64); !ok || err != nil || name != segmentName(base) {
		return 0, 0, fmt.Errorf("%s is not a log segment file (<20-digit base offset>.log)", path)
	}
	return bucket, base, nil
}

// copyTail copies the bytes of file from pos on into a new file to, synced.
func copyTail(file string, pos int64, to string) error {
	src, err := os.Open(file)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := src.Seek(pos, io.SeekStart); err != nil {
		dst.Close()
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return errors.Join(dst.Sync(), dst.Close())
}
