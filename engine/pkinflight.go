package engine

import (
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/logstore"
)

// A primary-key write has three steps. Under its buckets' locks it merges
// its rows with the stored ones, producing its state change and its
// changelog; then its changelog is encoded (statistics, compression) and
// appended; then, once that changelog is durable, its state change is
// committed. The last two run on an appender and a committer goroutine, in
// write order, so that a stream merges its next batch meanwhile: a write in
// between reads through the state changes not yet committed
// (kv.Txn.ReadThrough). Readers of the state see committed writes only, all
// durable; a write is acknowledged once committed, so it is visible to every
// later read. An idempotent writer's batch is appended under the locks, so
// that a retry finds it in the log and its sequence is checked in time.

// pkTxn is a write on its way from merged to committed.
type pkTxn struct {
	txn     *kv.Txn
	t       *table
	sch     *tableSchema
	mem     memory.Allocator
	writer  logstore.Writer
	buckets []int
	changes []changelogPart // per bucket, until appended

	appended  chan struct{}     // closed when the changelog is appended (or failed to be)
	log       *logstore.Pending // set before appended is closed
	appendErr error             // set before appended is closed

	done chan struct{} // closed when committed or failed
	ends map[int]int64 // each bucket's log end after the write; set before done
	err  error         // set before done
}

// appendChangelog encodes the write's changelog, one frame per bucket, and
// appends them as one atomic unit.
func (p *pkTxn) appendChangelog() error {
	defer close(p.appended)
	t, info := p.t, p.sch.info
	enc, err := p.sch.getEncoder(t.codec, p.mem)
	if err != nil {
		p.appendErr = err
		return err
	}
	defer p.sch.putEncoder(enc)
	parts := make([]logstore.Part, 0, len(p.changes))
	for i, c := range p.changes {
		b, err := c.encode(enc, info.SchemaID, p.writer)
		if err != nil {
			releaseBatches(parts)
			p.appendErr = err
			return err
		}
		parts = append(parts, logstore.Part{Bucket: p.buckets[i], Batch: b})
	}
	p.releaseChanges()
	p.log, err = t.log.AppendAsync(parts, p.writer)
	if err != nil && t.dropped.Load() {
		err = errs.New(errs.NotFound, "table %s was dropped", info.Path())
	}
	p.appendErr = err
	return err
}

// releaseChanges lets go of the changelog records.
func (p *pkTxn) releaseChanges() {
	for _, c := range p.changes {
		c.rec.Release()
	}
	p.changes = nil
}

// wait blocks until the write is committed.
func (p *pkTxn) wait() (map[int]int64, error) {
	<-p.done
	return p.ends, p.err
}

// finished returns a pkTxn that has nothing left to do.
func finished(ends map[int]int64, err error) *pkTxn {
	p := &pkTxn{done: make(chan struct{}), ends: ends, err: err}
	close(p.done)
	return p
}

// inflight is a table's appended, uncommitted writes, oldest first.
type inflight struct {
	mu         sync.Mutex
	txns       []*pkTxn
	toAppend   []*pkTxn // those whose changelog the appender has yet to append
	appending  bool
	committing bool
	err        error // a write failed: the state lags the log until the table is reopened
}

// through returns the txns of writes in flight on any of buckets, newest
// first: what a write on those buckets reads through. The caller holds the
// buckets' locks, so these txns no longer change.
func (f *inflight) through(buckets []int) []*kv.Txn {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*kv.Txn
	for _, p := range slices.Backward(f.txns) {
		if overlaps(p.buckets, buckets) {
			out = append(out, p.txn)
		}
	}
	return out
}

// failed returns the error of a failed commit, after which the table takes
// no more writes until it is reopened (and its log replayed).
func (f *inflight) failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// reset lets writes in again once the table has recovered from a failure.
// The caller has quiesced the table.
func (f *inflight) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = nil
}

// add queues p after the writes queued before it: to have its changelog
// appended, unless that is done, then to be committed. The caller holds p's
// buckets' locks.
func (f *inflight) add(p *pkTxn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.txns = append(f.txns, p)
	if p.changes != nil {
		f.toAppend = append(f.toAppend, p)
		if !f.appending {
			f.appending = true
			go f.appendAll()
		}
	}
	if !f.committing {
		f.committing = true
		go f.commitAll()
	}
}

// appendAll appends the queued writes' changelogs in order until none is
// left. After a failure nothing more is appended: each later write was
// merged on top of the failed one.
func (f *inflight) appendAll() {
	for {
		f.mu.Lock()
		if len(f.toAppend) == 0 {
			f.appending = false
			f.mu.Unlock()
			return
		}
		p, err := f.toAppend[0], f.err
		f.toAppend[0] = nil // no longer kept by the queue's array
		f.toAppend = f.toAppend[1:]
		f.mu.Unlock()
		if err != nil {
			p.releaseChanges()
			p.appendErr = err
			close(p.appended)
			continue
		}
		if err := p.appendChangelog(); err != nil {
			f.fail(err)
		}
	}
}

// waitAppended waits until the changelogs of the writes queued on any of
// buckets are appended. The caller holds the buckets' locks.
func (f *inflight) waitAppended(buckets []int) {
	if last := f.lastOn(buckets); last != nil {
		<-last.appended // appends are in order: the earlier ones are done too
	}
}

// fail records the first failure.
func (f *inflight) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

// commitAll commits the queued writes in order until none is left. After a
// failure every queued write fails too: each was merged on top of it.
func (f *inflight) commitAll() {
	for {
		f.mu.Lock()
		if len(f.txns) == 0 {
			f.committing = false
			f.mu.Unlock()
			return
		}
		p, err := f.txns[0], f.err
		f.mu.Unlock()
		if err == nil {
			err = p.commit()
		} else {
			<-p.appended
			p.txn.Abort()
		}
		if err != nil {
			f.fail(err)
		}
		f.mu.Lock()
		f.txns[0] = nil // no longer kept (with its view of keys) by the queue's array
		f.txns = f.txns[1:]
		f.mu.Unlock()
		p.err = err
		close(p.done)
	}
}

// drain waits until no write on any of buckets is in flight. The caller
// holds the buckets' locks, so none starts meanwhile.
func (f *inflight) drain(buckets []int) {
	if last := f.lastOn(buckets); last != nil {
		<-last.done // commits are in order: the earlier ones are done too
	}
}

// lastOn returns the newest queued write on any of buckets, or nil.
func (f *inflight) lastOn(buckets []int) *pkTxn {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range slices.Backward(f.txns) {
		if overlaps(p.buckets, buckets) {
			return p
		}
	}
	return nil
}

func overlaps(a, b []int) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// commit commits the write's state change once its changelog is durable,
// with each bucket's new applied offset.
func (p *pkTxn) commit() error {
	<-p.appended
	if p.appendErr != nil {
		p.txn.Abort()
		return p.appendErr
	}
	res, err := p.log.Wait()
	if err != nil || res.Duplicate {
		// A duplicate is a retried batch: the original's state is there.
		p.txn.Abort()
		p.ends = res.Ends
		return err
	}
	for _, b := range p.buckets {
		if err := p.txn.SetApplied(p.sch.info.TableID, b, res.Ends[b]); err != nil {
			p.txn.Abort()
			return err
		}
	}
	p.ends = res.Ends
	if err := p.txn.Commit(); err != nil {
		return errs.New(errs.Unavailable, "commit the state of %s: %w", p.sch.info.Path(), err)
	}
	return nil
}
