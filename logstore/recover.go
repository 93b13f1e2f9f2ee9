package logstore

import (
	"errors"
	"log/slog"
	"math"
	"slices"

	"github.com/fluxgate-io/fluxgate/internal/fsio"
)

// Recovery (see the package comment for the invariant it restores).
//
// Every frame records the table's durable txn at the time it was appended, so
// the largest such value found, D, bounds what was certainly complete: every
// txn <= D reached all its buckets and was synced. Only txns above D can be
// incomplete, and they sit at the tails of the buckets. Recovery scans each
// bucket back from its end (verifying CRCs, cutting a torn tail) until it
// reaches frames of txn <= D, counts the parts of every later txn, and cuts
// every bucket at the first txn that lacks a part. Nothing acknowledged is
// lost: an append is acknowledged only once it and all earlier txns are
// durable, so its txn is <= every cut.

// tailFrame is what recovery keeps of a frame it scanned.
type tailFrame struct {
	seg   int // index into the bucket's segments
	pos   int64
	txn   uint64
	parts uint16
}

// bucketTail is the part of a bucket that recovery scanned, newest segments
// first.
type bucketTail struct {
	b          *bucket
	from       int                      // first scanned segment; len(segments) when none
	frames     []tailFrame              // in log order
	durable    uint64                   // durable txn recorded by the last frame
	durableEnd int64                    // the bucket's end at the last durable snapshot
	merge      func(a, b []byte) []byte // Options.Summarize
	log        *slog.Logger
}

// scanBack verifies and indexes the segment before the scanned ones. A bad
// frame there is cut if it is a torn tail (see checkBadFrame); newer
// segments then hold no intact frame, and they go too.
func (tl *bucketTail) scanBack() error {
	tl.from--
	i := tl.from
	seg := tl.b.mu.segments[i]
	var frames []tailFrame
	valid, err := seg.rebuild(true, tl.merge, func(h *header, pos int64, _ []byte) {
		frames = append(frames, tailFrame{seg: i, pos: pos, txn: h.txn, parts: h.txnParts})
		tl.durable = max(tl.durable, h.durableTxn)
	})
	if err != nil {
		return err
	}
	if valid < seg.size {
		if err := tl.b.checkBadFrame(i, valid, tl.durableEnd); err != nil {
			return err
		}
		tl.log.Warn("recovery: cutting a torn write at the end of the log",
			"file", seg.logPath, "position", valid, "bytes", seg.size-valid)
		if err := tl.b.dropAfter(i); err != nil {
			return err
		}
		if err := seg.truncate(valid); err != nil {
			return err
		}
		tl.frames = nil
	}
	tl.frames = append(frames, tl.frames...)
	return nil
}

func (tl *bucketTail) more() bool { return tl.from > 0 }

func (tl *bucketTail) firstTxn() uint64 {
	if len(tl.frames) == 0 {
		return math.MaxUint64
	}
	return tl.frames[0].txn
}

func (t *Table) recover() error {
	snap, err := readWriterSnapshot(t.opts.FS, t.dir, len(t.buckets))
	if err != nil {
		return err
	}

	// Find the last good frame of every bucket, and with it D.
	tails := make([]*bucketTail, len(t.buckets))
	d := snap.Txn
	for i, b := range t.buckets {
		tl := &bucketTail{b: b, from: len(b.mu.segments), durableEnd: snap.Ends[i], merge: t.opts.Summarize, log: t.opts.Logger}
		for len(tl.frames) == 0 && tl.more() {
			if err := tl.scanBack(); err != nil {
				return err
			}
		}
		d = max(d, tl.durable)
		tails[i] = tl
	}

	// Reach back to txn <= D, then find the first incomplete txn.
	count := map[uint64]int{}
	want := map[uint64]uint16{}
	for _, tl := range tails {
		for tl.firstTxn() > d && tl.more() {
			if err := tl.scanBack(); err != nil {
				return err
			}
		}
		for _, f := range tl.frames {
			if f.txn > d {
				count[f.txn]++
				want[f.txn] = f.parts
			}
		}
	}
	cutTxn := uint64(math.MaxUint64)
	for txn, n := range count {
		if n < int(want[txn]) {
			cutTxn = min(cutTxn, txn)
		}
	}

	// Cut, then bring every bucket's state in line with what is left.
	last := d
	for _, tl := range tails {
		keep := len(tl.frames)
		for j, f := range tl.frames {
			if f.txn >= cutTxn {
				keep = j
				break
			}
		}
		if keep < len(tl.frames) {
			f := tl.frames[keep]
			t.opts.Logger.Warn("recovery: cutting an append that did not reach all its buckets",
				"dir", tl.b.dir, "txn", f.txn, "position", f.pos)
			if err := tl.b.cutAt(f.seg, f.pos); err != nil {
				return err
			}
		}
		if keep > 0 {
			last = max(last, tl.frames[keep-1].txn)
		}
		for _, s := range tl.b.mu.segments[:min(tl.from, len(tl.b.mu.segments))] {
			if err := s.loadIndex(); err != nil {
				return err
			}
		}
		if err := tl.b.dropMisnamedTail(t.opts.Logger); err != nil {
			return err
		}
		segs := tl.b.mu.segments
		for i := 1; i < len(segs); i++ {
			if segs[i].base != segs[i-1].next {
				t.opts.Logger.Warn("recovery: offsets missing between segments (a roll before issue 28 named a segment past the frames before it); reads go on at the next segment",
					"file", segs[i].logPath, "frames end at", segs[i-1].next)
			}
		}
		for _, s := range segs {
			if err := s.f.Sync(); err != nil {
				return err
			}
		}
		if err := fsio.SyncDir(t.opts.FS, tl.b.dir); err != nil {
			return err
		}
		for _, s := range segs[:len(segs)-1] {
			if err := s.loadSummary(); err != nil {
				// A hint: the segment is read frame by frame meanwhile.
				t.opts.Logger.Warn("recovery: cannot write a segment's summary", "file", s.summaryPath(), "err", err)
			}
		}
		// The log ends where its last frame does (an empty active segment
		// starts there too, see dropMisnamedTail).
		tl.b.logEnd = segs[len(segs)-1].next
		for _, s := range segs {
			tl.b.lastTs = max(tl.b.lastTs, s.maxTs)
		}
		tl.b.hw.Store(tl.b.logEnd)
	}
	t.lastTxn = last
	t.durable.Store(last)

	t.writers = snap.Writers
	t.writers.stamp(t.opts.Now().UnixMilli())
	return t.replayWriters(snap)
}

// cutAt removes everything from position pos of segment i on.
func (b *bucket) cutAt(i int, pos int64) error {
	if err := b.dropAfter(i); err != nil {
		return err
	}
	s := b.mu.segments[i]
	if err := s.truncate(pos); err != nil {
		return err
	}
	_, err := s.rebuild(false, nil, nil)
	return err
}

// dropMisnamedTail removes the empty segments at the end of the log whose
// name is not where the frames before them end. Before rolls waited for the
// old segment's frames, a roll could create the new file while the last
// frames were still queued, and a crash then left a name past the last
// durable frame: an offset hole that every full read failed at as expired.
// Those offsets were never acknowledged (their frames were never written),
// the file holds nothing, and the log ends where its frames do; the next
// append takes the first missing offset. Once such a segment holds frames
// (an older version appended to it), the hole stays and readers pass over
// it (Reader.locate). Recovery only.
func (b *bucket) dropMisnamedTail(log *slog.Logger) error {
	for {
		segs := b.mu.segments
		n := len(segs)
		if n < 2 || segs[n-1].size > 0 || segs[n-1].base == segs[n-2].next {
			return nil
		}
		log.Warn("recovery: removing an empty segment named past the end of the log",
			"file", segs[n-1].logPath, "log end", segs[n-2].next)
		if err := b.dropAfter(n - 2); err != nil {
			return err
		}
	}
}

// dropAfter removes the segments after segment i. Recovery only.
func (b *bucket) dropAfter(i int) error {
	var err error
	for _, s := range b.mu.segments[i+1:] {
		err = errors.Join(err, s.remove())
	}
	b.mu.segments = b.mu.segments[:i+1]
	return err
}

// replayWriters brings the writer table from the snapshot up to the log end.
// The parts of one append are in several buckets, so frames are ordered by
// txn before they are applied.
func (t *Table) replayWriters(snap *writerSnapshot) error {
	type replayed struct {
		txn    uint64
		id     string
		seq    int64
		bucket int
		end    int64
		at     int64
	}
	var all []replayed
	for i, b := range t.buckets {
		from := snap.Ends[i]
		for _, s := range b.mu.segments {
			if s.next <= from || s.size == 0 {
				continue
			}
			start := int64(0)
			if from > s.base {
				start = s.seekOffset(from)
			}
			_, err := scanFrames(s.f, start, s.size, true, func(h *header, _ int64, frame []byte) error {
				if h.baseOffset < from || h.writerIDLen == 0 {
					return nil
				}
				p, err := parsePrefix(h, frame)
				if err != nil {
					return err
				}
				all = append(all, replayed{h.txn, p.writerID, h.writerSeq, i, h.nextOffset(), h.commitTs})
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	slices.SortFunc(all, func(a, b replayed) int {
		if a.txn != b.txn {
			if a.txn < b.txn {
				return -1
			}
			return 1
		}
		return a.bucket - b.bucket
	})
	for _, r := range all {
		t.writers.noteFrame(r.id, r.seq, r.txn, r.bucket, r.end, r.at)
	}
	return nil
}
