package logstore

import (
	"errors"
	"fmt"
	"sort"
	"syscall"

	"github.com/fluxgate-io/fluxgate/errs"
)

// Storage faults. A failed write or fsync of a segment leaves its end
// unknown: the kernel may have dropped the dirty pages it could not write,
// and a later fsync of the same file may report success for them. So the
// fault is sticky: nothing more is appended (an append after the failed
// write would follow a hole), every append waiting to become durable fails,
// and the next append first recovers the log as after a crash: each bucket
// is cut back to its high watermark, which the last good sync made durable
// and which covers everything acknowledged, and its files are opened again
// and recovered. Until the disk works again that recovery fails and so does
// the append, with the error that says why; reads below the high watermark
// go on meanwhile.

// storageError gives a failed file operation of the log its kind: a full
// disk is RESOURCE_EXHAUSTED, any other I/O error UNAVAILABLE; either passes
// once the operator has made room or repaired the disk, and the client may
// then write again.
func storageError(err error, format string, args ...any) error {
	kind := errs.Unavailable
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		kind = errs.ResourceExhausted
	}
	return errs.New(kind, "%s: %w", fmt.Sprintf(format, args...), err)
}

// faulted returns the fault that stops appends, or nil.
func (t *Table) faulted() error {
	t.sync.Lock()
	defer t.sync.Unlock()
	return t.sync.fault
}

// setFault records the first fault and wakes whoever waits for a sync, and
// returns the fault in force.
func (t *Table) setFault(err error) error {
	t.sync.Lock()
	defer t.sync.Unlock()
	return t.setFaultLocked(err)
}

func (t *Table) setFaultLocked(err error) error {
	if t.sync.fault == nil {
		t.sync.fault = err
		t.opts.Logger.Error("log storage failed: appends stop until it recovers", "dir", t.dir, "err", err)
	}
	t.sync.cond.Broadcast()
	return t.sync.fault
}

// Recover recovers the log from a storage fault, if it has one, as the next
// append would. It returns why it cannot while the disk still fails.
func (t *Table) Recover() error {
	if t.faulted() == nil {
		return nil
	}
	return t.recoverFault()
}

// recoverFault recovers the log from its fault (see above), or returns why
// it cannot yet.
func (t *Table) recoverFault() error {
	// Take the sync slot, so that no round runs while the files change.
	t.sync.Lock()
	for t.sync.running {
		t.sync.cond.Wait()
	}
	if t.sync.fault == nil {
		t.sync.Unlock()
		return nil // another append recovered it meanwhile
	}
	t.sync.running = true
	t.sync.Unlock()

	t.appendMu.Lock()
	defer t.appendMu.Unlock()
	durable := t.durable.Load()
	err := t.reopenLocked(durable)
	t.sync.Lock()
	defer t.sync.Unlock()
	t.sync.running = false
	t.sync.cond.Broadcast()
	if err != nil {
		return storageError(err, "recover the log %s from %v", t.dir, t.sync.fault)
	}
	t.opts.Logger.Warn("log storage recovered: appends resume", "dir", t.dir, "fault", t.sync.fault)
	t.sync.ended = append(t.sync.ended, durable)
	t.sync.gen++
	t.sync.fault = nil
	return nil
}

// reopenLocked cuts every bucket back to its high watermark and opens the
// log's files again from disk. Called with appendMu and the sync slot held.
func (t *Table) reopenLocked(durable uint64) error {
	if t.closed {
		return errs.New(errs.Unavailable, "table log %s is closed", t.dir)
	}
	// The old writer may have dropped frames; a new one starts clean.
	t.frames.stop()
	t.frames = startFrameWriter()

	ends := make([]int64, len(t.buckets))
	for i, b := range t.buckets {
		ends[i] = b.hw.Load()
	}
	// The writer state as of the durable point, so that recovery finds no
	// trace of the appends cut.
	if err := t.writers.durableAt(durable).snapshot(durable, ends).write(t.opts.FS, t.dir); err != nil {
		return err
	}
	for i, b := range t.buckets {
		if err := b.cutTo(ends[i]); err != nil {
			return err
		}
	}
	fresh, err := open(t.dir, len(t.buckets), t.opts)
	if err != nil {
		return err
	}
	for i := range t.buckets {
		if end := fresh.buckets[i].logEnd; end != ends[i] {
			fresh.closeFiles()
			return fmt.Errorf("bucket %d ends at offset %d after recovery, its high watermark was %d", i, end, ends[i])
		}
	}
	for i, b := range t.buckets {
		nb := fresh.buckets[i]
		b.mu.Lock()
		old := b.mu.segments
		b.mu.segments = nb.mu.segments
		b.mu.Unlock()
		for _, s := range old {
			s.retire()
		}
		b.logEnd, b.lastTs = nb.logEnd, nb.lastTs
	}
	t.lastTxn = fresh.lastTxn
	t.durable.Store(fresh.durable.Load())
	t.writers = fresh.writers
	t.dirty = map[*segment]struct{}{}
	t.newDirs, t.snapshotWanted = false, false
	return nil
}

// durableAt returns the writer table without the batches of txns after
// durable.
func (wt writerTable) durableAt(durable uint64) writerTable {
	out := make(writerTable, len(wt))
	for id, hist := range wt {
		var kept []applied
		for _, a := range hist {
			if a.Txn <= durable {
				kept = append(kept, a)
			}
		}
		if len(kept) > 0 {
			out[id] = kept
		}
	}
	return out
}

// cutTo removes every frame at or after offset, a high watermark. Readers
// never read that far, so they read on meanwhile. Called with appendMu held.
func (b *bucket) cutTo(offset int64) error {
	b.mu.Lock()
	segs := b.mu.segments
	i := sort.Search(len(segs), func(i int) bool { return segs[i].base > offset }) - 1
	i = max(i, 0)
	later := segs[i+1:]
	b.mu.segments = segs[: i+1 : i+1]
	b.mu.Unlock()
	var err error
	for _, s := range later {
		err = errors.Join(err, s.remove())
	}
	if err != nil {
		return err
	}
	s := segs[i]
	pos, err := s.positionOf(offset)
	if err != nil {
		return err
	}
	return s.truncate(pos)
}

// positionOf returns the file position of the frame that starts at offset,
// or the end of the frames before it when none does. It fails rather than
// guess when it cannot read that far: the cut must never reach a frame
// below offset.
func (s *segment) positionOf(offset int64) (int64, error) {
	if offset >= s.next {
		return s.size, nil
	}
	start, next := int64(0), s.base
	s.mu.Lock()
	if i := sort.Search(len(s.mu.index), func(i int) bool { return s.mu.index[i].offset > offset }); i > 0 {
		start, next = s.mu.index[i-1].pos, s.mu.index[i-1].offset
	}
	s.mu.Unlock()
	pos, err := scanFrames(s.f, start, s.size, false, func(h *header, _ int64, _ []byte) error {
		if h.baseOffset >= offset {
			return errFound
		}
		next = h.nextOffset()
		return nil
	})
	if err != nil && err != errFound {
		return 0, err
	}
	if next != offset {
		return 0, fmt.Errorf("%s: cannot find offset %d to cut at (frames read up to %d)", s.logPath, offset, next)
	}
	return pos, nil
}

var errFound = errors.New("found")
