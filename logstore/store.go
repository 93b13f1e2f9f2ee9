// Package logstore is the per-bucket append-only log of a table: framed Arrow
// batches in segment files, offset and time indexes, group-committed fsyncs,
// the high watermark and tail notification, retention, and recovery of a torn
// tail. It knows nothing of table definitions beyond a bucket count; the
// engine hands it encoded batches and reads them back by offset.
//
// A table's append may span several buckets (one batch split by bucket key).
// Such an append is one transaction: its frames carry the same txn id and the
// number of parts, recovery drops every transaction that did not reach all of
// its buckets, and an append is acknowledged only when it and every earlier
// append of the table are durable.
package logstore

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sync/errgroup"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/fsio"
)

// Options configure a table's log. The zero value means the defaults.
type Options struct {
	// SegmentBytes is the size at which the active segment is rolled.
	// Default 256 MiB.
	SegmentBytes int64
	// IndexIntervalBytes is the log distance between two index entries.
	// Default 4 KiB.
	IndexIntervalBytes int64
	// Now is the clock for commit timestamps. Default time.Now.
	Now func() time.Time
	// Logger receives recovery and retention events. Default slog.Default().
	Logger *slog.Logger
	// OnSync, if set, is told how long each group-commit round took.
	OnSync func(time.Duration)
	// Summarize, if set, merges two frames' statistics blocks into one that
	// holds for both. Each segment then keeps the merge of its frames', and a
	// reader's skip function can pass over a sealed segment whole.
	Summarize func(a, b []byte) []byte
	// FS is where the log's files are. Default vfs.Default, the real disk.
	FS vfs.FS
	// WriterExpiration is how long an idempotent writer's state is kept
	// after its last batch (by Now). Default DefaultWriterExpiration.
	WriterExpiration time.Duration
	// Files keeps the log's segment files open within a budget of
	// descriptors; the logs of a process share one. Default: a cache of
	// the log's own of DefaultCachedFiles.
	Files *FileCache
}

func (o Options) withDefaults() Options {
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 256 << 20
	}
	if o.IndexIntervalBytes <= 0 {
		o.IndexIntervalBytes = 4 << 10
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.WriterExpiration <= 0 {
		o.WriterExpiration = DefaultWriterExpiration
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Files == nil {
		o.Files = NewFileCache(DefaultCachedFiles)
	}
	return o
}

// Part is the piece of an append that goes to one bucket.
type Part struct {
	Bucket int
	Batch  *Batch
}

// ReleaseParts releases the batches of parts that were not appended.
func ReleaseParts(parts []Part) {
	for _, p := range parts {
		p.Batch.Release()
	}
}

// Writer identifies an idempotent writer's batch. The zero value is a
// non-idempotent write.
type Writer struct {
	ID  string
	Seq int64
	// Sparse lets the sequence skip ahead: a partition's log sees only the
	// batches that hold rows of it. Retries are still recognized.
	Sparse bool
}

// Result is what an append did.
type Result struct {
	// Ends holds, for each bucket written, its log end offset after the append.
	Ends map[int]int64
	// Duplicate is set when the writer's batch had been applied before; Ends
	// are then those of the original append.
	Duplicate bool
}

// Table is the log of one table: one directory per bucket.
type Table struct {
	dir     string
	opts    Options
	buckets []*bucket

	// appendMu orders appends across buckets: txn ids grow in every bucket.
	appendMu       sync.Mutex
	lastTxn        uint64                // guarded by appendMu
	dirty          map[*segment]struct{} // written since the last sync; guarded by appendMu
	newDirs        bool                  // files created since the last sync; guarded by appendMu
	writers        writerTable           // guarded by appendMu
	writersSwept   int64                 // Unix ms of the last expiry sweep; guarded by appendMu
	snapshotWanted bool                  // guarded by appendMu
	closed         bool                  // guarded by appendMu
	frames         *frameWriter          // writes what appends queue; guarded by appendMu

	durable atomic.Uint64 // every txn <= durable is synced
	sync    struct {
		sync.Mutex
		cond    *sync.Cond
		running bool // a sync round, or recovery from a fault, is under way
		// fault is the failed write or fsync after which nothing more is
		// appended until the log is recovered (fault.go); nil while healthy.
		fault error
		// gen counts recoveries from faults; an append belongs to the
		// generation it was made in. Written with appendMu held too.
		gen int
		// ended holds, for each past generation, its durable txn at the
		// fault: its later appends were cut by the recovery.
		ended []uint64
	}

	bytesRead atomic.Int64
}

// Open opens (creating if needed) the log of a table with n buckets in dir,
// recovering from an unclean shutdown: a torn tail is cut off, and so is
// every multi-bucket append that did not reach all of its buckets. A damaged
// frame that is not a torn tail fails Open with a *CorruptError, the log
// left as it was.
func Open(dir string, n int, opts Options) (*Table, error) {
	t, err := open(dir, n, opts.withDefaults())
	if err != nil {
		return nil, err
	}
	t.frames = startFrameWriter()
	return t, nil
}

// open opens and recovers the log's files; its caller starts the frame
// writer.
func open(dir string, n int, opts Options) (*Table, error) {
	t := &Table{dir: dir, opts: opts, dirty: map[*segment]struct{}{}}
	t.sync.cond = sync.NewCond(&t.sync.Mutex)
	created := 0
	for i := range n {
		b, fresh, err := openBucket(filepath.Join(dir, fmt.Sprint(i), "log"), i, t.opts)
		if err != nil {
			t.closeFiles()
			return nil, fmt.Errorf("open bucket %d of %s: %w", i, dir, err)
		}
		t.buckets = append(t.buckets, b)
		if fresh {
			created++
		}
	}
	if created == n {
		// A new log: nothing to recover. Its first sync round makes the
		// files just created durable (a partition is created per bucket
		// for every new value, and syncing here cost several fsyncs each).
		t.writers = writerTable{}
		t.newDirs = true
		return t, nil
	}
	if err := t.recover(); err != nil {
		t.closeFiles()
		return nil, fmt.Errorf("recover %s: %w", dir, err)
	}
	return t, nil
}

// Buckets reports the number of buckets.
func (t *Table) Buckets() int { return len(t.buckets) }

// BytesRead reports how many bytes readers have read from segment files.
func (t *Table) BytesRead() int64 { return t.bytesRead.Load() }

// HighWatermark returns the bucket's high watermark: offsets below it are
// durable and readable.
func (t *Table) HighWatermark(bucket int) int64 { return t.buckets[bucket].hw.Load() }

// EarliestOffset returns the first offset the bucket still retains.
func (t *Table) EarliestOffset(bucket int) int64 {
	b := t.buckets[bucket]
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.mu.segments[0].base
}

// Append writes the parts, each to its bucket, as one atomic unit, and returns
// once they are durable and visible. Each part's Batch is consumed.
func (t *Table) Append(parts []Part, w Writer) (Result, error) {
	p, err := t.AppendAsync(parts, w)
	if err != nil {
		return Result{}, err
	}
	return p.Wait()
}

// Previous reports whether the writer's batch was applied before and, if so,
// returns its result once it is durable. An error means the sequence is out
// of order.
func (t *Table) Previous(w Writer) (Result, bool, error) {
	t.appendMu.Lock()
	prev, err := t.writers.check(w, t.idleBefore(t.opts.Now().UnixMilli()))
	gen := t.sync.gen
	t.appendMu.Unlock()
	if err != nil || prev == nil {
		return Result{}, false, err
	}
	return Result{Ends: prev.ends, Duplicate: true}, true, t.waitDurable(prev.txn, gen)
}

// Pending is an append that is written but perhaps not yet durable.
type Pending struct {
	t   *Table
	gen int
	txn uint64
	res Result
}

// Wait blocks until the append is durable and visible, and returns its result.
func (p *Pending) Wait() (Result, error) {
	return p.res, p.t.waitDurable(p.txn, p.gen)
}

// AppendAsync writes the parts like Append but returns before they are
// durable, so that a stream can append its next batch while this one is
// synced. Appends become durable, and visible, in the order they were made.
//
// After a failed write or fsync the log appends nothing until it has
// recovered (fault.go); the next append tries that first, and fails with the
// fault's error while the disk still does.
func (t *Table) AppendAsync(parts []Part, w Writer) (*Pending, error) {
	queued := 0 // parts handed to the frame writer, which releases them
	defer func() { ReleaseParts(parts[queued:]) }()
	if t.faulted() != nil {
		if err := t.recoverFault(); err != nil {
			return nil, err
		}
	}
	t.appendMu.Lock()
	defer t.appendMu.Unlock()
	if t.closed {
		return nil, errs.New(errs.Unavailable, "table log %s is closed", t.dir)
	}
	if err := t.faulted(); err != nil {
		return nil, err
	}
	if err := t.frames.failed(); err != nil {
		// A frame is missing from its segment: nothing may follow it.
		return nil, t.setFault(storageError(err, "append to %s", t.dir))
	}
	gen := t.sync.gen
	now := t.opts.Now().UnixMilli()
	if w.ID != "" {
		prev, err := t.writers.check(w, t.idleBefore(now))
		if err != nil {
			return nil, err
		}
		if prev != nil {
			return &Pending{t: t, gen: gen, txn: prev.txn, res: Result{Ends: prev.ends, Duplicate: true}}, nil
		}
	}
	if len(parts) == 0 {
		return &Pending{t: t, gen: gen, res: Result{Ends: map[int]int64{}}}, nil
	}
	t.lastTxn++
	txn := t.lastTxn
	ends := make(map[int]int64, len(parts))
	for _, p := range parts {
		if err := t.appendLocked(p, txn, uint16(len(parts)), now); err != nil {
			// A part may be on disk without the others: recovery cuts it.
			return nil, t.setFault(storageError(err, "append to %s", t.dir))
		}
		queued++
		ends[p.Bucket] = t.buckets[p.Bucket].logEnd
	}
	if w.ID != "" {
		t.writers.record(w, txn, ends, now)
		t.sweepWriters(now)
	}
	return &Pending{t: t, gen: gen, txn: txn, res: Result{Ends: ends}}, nil
}

// NextSequence returns the sequence the writer's next batch takes: one past
// its last applied batch, or 0 if the writer is unknown or its state
// expired.
func (t *Table) NextSequence(id string) int64 {
	t.appendMu.Lock()
	defer t.appendMu.Unlock()
	return t.writers.next(id, t.idleBefore(t.opts.Now().UnixMilli()))
}

// idleBefore is the commit time before which a writer's last batch makes it
// expired.
func (t *Table) idleBefore(now int64) int64 {
	return now - t.opts.WriterExpiration.Milliseconds()
}

// sweepWriters drops expired writers, after an append and at most once per
// tenth of the expiration, so that a table written by ever new writer ids
// keeps a bounded state. Called with appendMu held.
func (t *Table) sweepWriters(now int64) {
	if now-t.writersSwept < t.opts.WriterExpiration.Milliseconds()/10 {
		return
	}
	t.writersSwept = now
	t.writers.expire(t.idleBefore(now))
}

func (t *Table) appendLocked(p Part, txn uint64, nparts uint16, now int64) error {
	b := t.buckets[p.Bucket]
	prefix := p.Batch.prefix
	h, err := parseHeader(prefix)
	if err != nil {
		return err
	}
	h.baseOffset = b.logEnd
	h.commitTs = max(b.lastTs, now)
	h.txn = txn
	h.durableTxn = t.durable.Load()
	h.txnParts = nparts
	h.putFixed(prefix)
	h.crc = checksum(p.Batch.payloadCRC, prefix)
	h.putFixed(prefix)

	seg := b.active()
	if seg.size > 0 && seg.size+int64(p.Batch.size) > t.opts.SegmentBytes {
		if seg, err = b.roll(t.opts, t.frames); err != nil {
			return err
		}
		t.newDirs = true
		t.snapshotWanted = true
	}
	pos := seg.size
	if err := seg.noteAppended(&h, pos); err != nil {
		return err
	}
	if t.opts.Summarize != nil {
		seg.summarize(h.stats(prefix), int64(h.recordCount), t.opts.Summarize)
	}
	t.frames.queue(frameWrite{seg: seg, bufs: append([][]byte{prefix}, p.Batch.pieces...), pos: pos, batch: p.Batch})
	b.logEnd, b.lastTs = h.nextOffset(), h.commitTs
	t.dirty[seg] = struct{}{}
	return nil
}

// waitDurable blocks until txn, appended in generation gen, is durable.
// Whoever finds no sync running starts one for everything appended so far
// (group commit): concurrent writers share one fsync per segment.
func (t *Table) waitDurable(txn uint64, gen int) error {
	t.sync.Lock()
	defer t.sync.Unlock()
	for {
		if gen < t.sync.gen {
			// Txn ids after a recovery start again from the durable ones.
			if txn <= t.sync.ended[gen] {
				return nil
			}
			return errs.New(errs.Unavailable, "append to %s was lost to a storage fault; the log has recovered since: write again", t.dir)
		}
		if t.durable.Load() >= txn {
			return nil
		}
		if t.sync.fault != nil {
			return t.sync.fault
		}
		if t.sync.running {
			t.sync.cond.Wait()
			continue
		}
		t.sync.running = true
		t.sync.Unlock()
		err := t.syncRound()
		t.sync.Lock()
		t.sync.running = false
		if err != nil {
			t.setFaultLocked(storageError(err, "sync %s", t.dir))
		}
		t.sync.cond.Broadcast()
	}
}

// syncRound makes everything appended so far durable, then advances the high
// watermarks and wakes tailing readers.
func (t *Table) syncRound() error {
	if t.opts.OnSync != nil {
		defer func(start time.Time) { t.opts.OnSync(time.Since(start)) }(time.Now())
	}
	t.appendMu.Lock()
	target := t.lastTxn
	queued := t.frames.queued
	dirty := t.dirty
	t.dirty = map[*segment]struct{}{}
	newDirs := t.newDirs
	t.newDirs = false
	ends := make([]int64, len(t.buckets))
	for i, b := range t.buckets {
		ends[i] = b.logEnd
	}
	var snap *writerSnapshot
	if t.snapshotWanted {
		t.writers.expire(t.idleBefore(t.opts.Now().UnixMilli()))
		snap = t.writers.snapshot(target, ends)
		t.snapshotWanted = false
	}
	t.appendMu.Unlock()

	if err := t.frames.wait(queued); err != nil {
		return err
	}
	if err := syncAll(dirty); err != nil {
		return err
	}
	if newDirs {
		if err := inParallel(len(t.buckets), func(i int) error { return fsio.SyncDir(t.opts.FS, t.buckets[i].dir) }); err != nil {
			return err
		}
	}
	if snap != nil {
		if err := snap.write(t.opts.FS, t.dir); err != nil {
			return err
		}
	}
	t.durable.Store(target)
	for i, b := range t.buckets {
		b.advance(ends[i])
	}
	return nil
}

// syncAll fsyncs the segments, in parallel: each is its own file.
func syncAll(segs map[*segment]struct{}) error {
	list := make([]*segment, 0, len(segs))
	for s := range segs {
		list = append(list, s)
	}
	return inParallel(len(list), func(i int) error { return list[i].f.Sync() })
}

// inParallel calls fn for 0 to n-1, at most syncParallel at once (each
// fsync holds its file open), and returns the first error.
func inParallel(n int, fn func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(syncParallel)
	for i := range n {
		g.Go(func() error { return fn(i) })
	}
	return g.Wait()
}

// syncParallel bounds the fsyncs under way at once.
const syncParallel = 16

// Expire removes whole segments whose newest batch is older than ttl. The
// active segment, segments not yet durable and segments holding offsets at
// or above keep(bucket) stay (the lake tier keeps what it has not copied;
// keep nil keeps nothing extra). It reports how many segments went.
func (t *Table) Expire(ttl time.Duration, keep func(bucket int) int64) (int, error) {
	if ttl <= 0 {
		return 0, nil
	}
	cutoff := t.opts.Now().Add(-ttl).UnixMilli()
	t.appendMu.Lock()
	defer t.appendMu.Unlock()
	removed := 0
	for i, b := range t.buckets {
		floor := b.hw.Load()
		if keep != nil {
			floor = min(floor, keep(i))
		}
		n, err := b.expireLocked(cutoff, floor)
		removed += n
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// Close makes everything durable, records the writer state and closes the
// files. Appends after Close fail with errs.Unavailable.
func (t *Table) Close() error {
	t.appendMu.Lock()
	if t.closed {
		t.appendMu.Unlock()
		return nil
	}
	t.closed = true
	var err error
	if t.faulted() == nil {
		// An empty txn makes the final round run, and its snapshot of the
		// writers spares the next open a replay.
		t.snapshotWanted = true
		t.lastTxn++
		last, gen := t.lastTxn, t.sync.gen
		t.appendMu.Unlock()
		err = t.waitDurable(last, gen)
	} else {
		t.appendMu.Unlock()
	}
	t.frames.stop()
	for _, b := range t.buckets {
		b.closeTail()
	}
	return errors.Join(err, t.closeFiles())
}

func (t *Table) closeFiles() error {
	var err error
	for _, b := range t.buckets {
		err = errors.Join(err, b.close())
	}
	return err
}

// Size reports the bytes of the table's log segments on disk.
func (t *Table) Size() int64 {
	t.appendMu.Lock()
	defer t.appendMu.Unlock()
	var n int64
	for _, b := range t.buckets {
		for _, s := range b.segments() {
			n += s.size
		}
	}
	return n
}

// LogEnd returns the offset the bucket's next append will take: the high
// watermark plus what is appended but not yet durable.
func (t *Table) LogEnd(bucket int) int64 {
	t.appendMu.Lock()
	defer t.appendMu.Unlock()
	return t.buckets[bucket].logEnd
}
