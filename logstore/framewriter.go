package logstore

import (
	"fmt"
	"sync"
)

// frameWriter writes appended frames to their segments from a goroutine of
// its own, in the order they were appended. An append only reserves its place
// in the segment and queues the frame, so that its caller goes on encoding the
// next batch while the kernel copies this one into the page cache; a sync
// round first waits for the frames queued before it.
type frameWriter struct {
	jobs    chan frameWrite
	stopped chan struct{}
	queued  uint64 // frames handed to jobs; guarded by the table's appendMu

	mu   sync.Mutex
	cond *sync.Cond
	done uint64 // frames written (or given up after an error)
	err  error  // the first write that failed; every later frame is dropped
}

// frameWrite is one frame: its pieces, written back to back at pos, and the
// batch they come from, released once written.
type frameWrite struct {
	seg   *segment
	bufs  [][]byte
	pos   int64
	batch *Batch
}

// frameWriteQueue bounds the frames queued but not yet written; an append
// waits when it is full.
const frameWriteQueue = 32

func startFrameWriter() *frameWriter {
	w := &frameWriter{jobs: make(chan frameWrite, frameWriteQueue), stopped: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	go w.run()
	return w
}

func (w *frameWriter) run() {
	defer close(w.stopped)
	for job := range w.jobs {
		err := w.failed()
		if err == nil {
			if err = job.seg.f.WriteVecAt(job.bufs, job.pos); err != nil {
				err = fmt.Errorf("write %s: %w", job.seg.logPath, err)
			}
		}
		job.batch.Release()
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.done++
		w.cond.Broadcast()
		w.mu.Unlock()
	}
}

// queue hands a frame to the writer. The caller holds the table's appendMu.
func (w *frameWriter) queue(job frameWrite) {
	w.queued++
	w.jobs <- job
}

// wait blocks until the first n queued frames are written and returns the
// first write error.
func (w *frameWriter) wait(n uint64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.done < n && w.err == nil {
		w.cond.Wait()
	}
	return w.err
}

// failed returns the first write error.
func (w *frameWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// stop writes what is queued and ends the goroutine. The caller holds the
// table's appendMu, so nothing more is queued.
func (w *frameWriter) stop() {
	close(w.jobs)
	<-w.stopped
}
