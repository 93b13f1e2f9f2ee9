// Package inflight is a primary-key table's writes merged and not yet
// committed: it appends their changelogs and commits their state changes in
// write order, and hands a write the ones it must read through.
package inflight

import (
	"slices"
	"sync"

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

// Changelog is a write's changelog, one part per bucket, not yet appended.
type Changelog interface {
	// Append encodes the parts and appends them as one atomic unit.
	Append() (*logstore.Pending, error)
	// Release lets go of the parts, appended or not.
	Release()
}

// Txn is a write on its way from merged to committed.
type Txn struct {
	txn       *kv.Txn
	tableID   int64
	table     string // the table's path, for errors
	buckets   []int
	changelog Changelog

	appended  chan struct{}     // closed when the changelog is appended (or failed to be)
	log       *logstore.Pending // set before appended is closed
	appendErr error             // set before appended is closed

	done chan struct{} // closed when committed or failed
	ends map[int]int64 // each bucket's log end after the write; set before done
	err  error         // set before done
}

// New returns the write of txn, its state change on buckets of table
// tableID (its path table), and of changelog.
func New(txn *kv.Txn, tableID int64, table string, buckets []int, changelog Changelog) *Txn {
	return &Txn{txn: txn, tableID: tableID, table: table, buckets: buckets, changelog: changelog, appended: make(chan struct{}), done: make(chan struct{})}
}

// Append appends the write's changelog.
func (p *Txn) Append() error {
	defer close(p.appended)
	p.log, p.appendErr = p.changelog.Append()
	return p.appendErr
}

// Wait blocks until the write is committed.
func (p *Txn) Wait() (map[int]int64, error) {
	<-p.done
	return p.ends, p.err
}

// Finished returns a Txn that has nothing left to do.
func Finished(ends map[int]int64, err error) *Txn {
	p := &Txn{done: make(chan struct{}), ends: ends, err: err}
	close(p.done)
	return p
}

// Queue is a table's appended, uncommitted writes, oldest first.
type Queue struct {
	mu         sync.Mutex
	txns       []*Txn
	toAppend   []*Txn // those whose changelog the appender has yet to append
	appending  bool
	committing bool
	err        error // a write failed: the state lags the log until the table is reopened
}

// Through returns the txns of writes in flight on any of buckets, newest
// first: what a write on those buckets reads through. The caller holds the
// buckets' locks, so these txns no longer change.
func (f *Queue) Through(buckets []int) []*kv.Txn {
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

// Failed returns the error of a failed commit, after which the table takes
// no more writes until it is reopened (and its log replayed).
func (f *Queue) Failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Reset lets writes in again once the table has recovered from a failure.
// The caller has quiesced the table.
func (f *Queue) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = nil
}

// Add queues p after the writes queued before it: to have its changelog
// appended, unless that is done, then to be committed. The caller holds p's
// buckets' locks.
func (f *Queue) Add(p *Txn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.txns = append(f.txns, p)
	select {
	case <-p.appended: // an idempotent writer's, appended under the locks
	default:
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
func (f *Queue) appendAll() {
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
			p.changelog.Release()
			p.appendErr = err
			close(p.appended)
			continue
		}
		if err := p.Append(); err != nil {
			f.Fail(err)
		}
	}
}

// WaitAppended waits until the changelogs of the writes queued on any of
// buckets are appended. The caller holds the buckets' locks.
func (f *Queue) WaitAppended(buckets []int) {
	if last := f.lastOn(buckets); last != nil {
		<-last.appended // appends are in order: the earlier ones are done too
	}
}

// Fail records the first failure.
func (f *Queue) Fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

// commitAll commits the queued writes in order until none is left. After a
// failure every queued write fails too: each was merged on top of it.
func (f *Queue) commitAll() {
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
			f.Fail(err)
		}
		f.mu.Lock()
		f.txns[0] = nil // no longer kept (with its view of keys) by the queue's array
		f.txns = f.txns[1:]
		f.mu.Unlock()
		p.err = err
		close(p.done)
	}
}

// Drain waits until no write on any of buckets is in flight. The caller
// holds the buckets' locks, so none starts meanwhile.
func (f *Queue) Drain(buckets []int) {
	if last := f.lastOn(buckets); last != nil {
		<-last.done // commits are in order: the earlier ones are done too
	}
}

// lastOn returns the newest queued write on any of buckets, or nil.
func (f *Queue) lastOn(buckets []int) *Txn {
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
func (p *Txn) commit() error {
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
		if err := p.txn.SetApplied(p.tableID, b, res.Ends[b]); err != nil {
			p.txn.Abort()
			return err
		}
	}
	p.ends = res.Ends
	if err := p.txn.Commit(); err != nil {
		return errs.New(errs.Unavailable, "commit the state of %s: %w", p.table, err)
	}
	return nil
}
