package logstore

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// bucket is one bucket's log: its segments, its end and its high watermark.
type bucket struct {
	id  int
	dir string

	logEnd int64 // next offset to assign; guarded by the table's appendMu
	lastTs int64 // commit time of the last frame; guarded by appendMu

	hw atomic.Int64
	mu struct {
		sync.RWMutex
		segments []*segment // ascending base; the last is active
		tail     chan struct{}
	}
}

// openBucket opens the bucket's segments, creating the first if it has
// none (fresh).
func openBucket(dir string, id int, opts Options) (b *bucket, fresh bool, err error) {
	if err := opts.FS.MkdirAll(dir, 0o755); err != nil {
		return nil, false, err
	}
	b = &bucket{id: id, dir: dir}
	b.mu.tail = make(chan struct{})
	bases, err := listSegments(opts.FS, dir)
	if err != nil {
		return nil, false, err
	}
	if len(bases) == 0 {
		bases, fresh = []int64{0}, true
	}
	for _, base := range bases {
		s, err := openSegment(opts.FS, opts.Files, dir, base, opts.IndexIntervalBytes)
		if err != nil {
			b.close()
			return nil, false, err
		}
		b.mu.segments = append(b.mu.segments, s)
	}
	return b, fresh, nil
}

func (b *bucket) active() *segment {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.mu.segments[len(b.mu.segments)-1]
}

// segments returns a copy of the segment list.
func (b *bucket) segments() []*segment {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return append([]*segment(nil), b.mu.segments...)
}

// roll starts a new active segment at the log end. Called with appendMu held.
//
// A segment's name is its first offset, a claim that every offset below it
// is in the segments before. So the new file is created only once the old
// segment's frames are written and synced: a crash in between must not leave
// a name past the last durable frame, an offset hole that readers would
// take for expired data (docs/format/log-segment.md, Recovery). It costs
// one wait for the frame writer and one fsync per segment, which the next
// sync round would have done anyway.
func (b *bucket) roll(opts Options, frames *frameWriter) (*segment, error) {
	old := b.active()
	if err := frames.wait(frames.queued); err != nil {
		return nil, err
	}
	if err := old.f.Sync(); err != nil {
		return nil, fmt.Errorf("sync %s before rolling it: %w", old.logPath, err)
	}
	if err := old.seal(); err != nil {
		return nil, fmt.Errorf("seal segment: %w", err)
	}
	s, err := openSegment(opts.FS, opts.Files, b.dir, b.logEnd, opts.IndexIntervalBytes)
	if err != nil {
		return nil, fmt.Errorf("roll segment: %w", err)
	}
	b.mu.Lock()
	b.mu.segments = append(b.mu.segments, s)
	b.mu.Unlock()
	return s, nil
}

// segmentFor returns the segment that holds offset, acquired, or nil when the
// offset is below the first retained one.
func (b *bucket) segmentFor(offset int64) *segment {
	b.mu.RLock()
	defer b.mu.RUnlock()
	segs := b.mu.segments
	i := sort.Search(len(segs), func(i int) bool { return segs[i].base > offset })
	if i == 0 || !segs[i-1].acquire() {
		return nil
	}
	return segs[i-1]
}

// segmentAfter returns the segment after s, acquired, or nil when s is the
// last or gone.
func (b *bucket) segmentAfter(s *segment) *segment {
	b.mu.RLock()
	defer b.mu.RUnlock()
	segs := b.mu.segments
	i := slices.Index(segs, s)
	if i < 0 || i+1 == len(segs) || !segs[i+1].acquire() {
		return nil
	}
	return segs[i+1]
}

// advance raises the high watermark and wakes the bucket's tailing readers.
func (b *bucket) advance(hw int64) {
	if hw <= b.hw.Load() {
		return
	}
	b.mu.Lock()
	b.hw.Store(hw)
	close(b.mu.tail)
	b.mu.tail = make(chan struct{})
	b.mu.Unlock()
}

// tail returns a channel closed when the high watermark next moves, or nil
// when it is already above offset.
func (b *bucket) tail(offset int64) <-chan struct{} {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.hw.Load() > offset {
		return nil
	}
	return b.mu.tail
}

// closeTail wakes every waiting reader for good (the log is closing).
func (b *bucket) closeTail() {
	b.mu.Lock()
	close(b.mu.tail)
	b.mu.tail = closedChan
	b.mu.Unlock()
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// expireLocked removes the leading segments whose newest frame is older than
// cutoff (unix ms). It keeps the active segment and anything not yet durable.
// Called with appendMu held.
func (b *bucket) expireLocked(cutoff, floor int64) (int, error) {
	b.mu.Lock()
	var gone []*segment
	for len(b.mu.segments) > 1 {
		s := b.mu.segments[0]
		if s.maxTs >= cutoff || s.next > floor {
			break
		}
		gone = append(gone, s)
		b.mu.segments = b.mu.segments[1:]
	}
	b.mu.Unlock()
	var err error
	for _, s := range gone {
		err = errors.Join(err, s.remove())
	}
	return len(gone), err
}

func (b *bucket) close() error {
	var err error
	for _, s := range b.mu.segments {
		err = errors.Join(err, s.close())
	}
	return err
}
