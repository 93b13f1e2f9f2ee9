package engine

import (
	"slices"
	"sync"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/logstore"
)

// A primary-key write has two halves. Under its buckets' locks it merges its
// rows with the stored ones and appends the changelog; then, once that
// changelog is durable, its state change is committed. The second half runs
// on a committer goroutine, in write order, so that a stream merges its next
// batch while the last one is synced: a write in between reads through the
// state changes not yet committed (kv.Txn.ReadThrough). Readers of the state
// see committed writes only, all durable; a write is acknowledged once
// committed, so it is visible to every later read.

// pkTxn is a write whose changelog is appended and whose state change waits
// to be committed.
type pkTxn struct {
	txn     *kv.Txn
	log     *logstore.Pending
	table   int64
	buckets []int

	done chan struct{} // closed when committed or failed
	ends map[int]int64 // each bucket's log end after the write; set before done
	err  error         // set before done
}

// wait blocks until the write is committed.
func (p *pkTxn) wait() (map[int]int64, error) {
	<-p.done
	return p.ends, p.err
}

// finished returns a pkTxn that has nothing left to commit.
func finished(ends map[int]int64, err error) *pkTxn {
	p := &pkTxn{done: make(chan struct{}), ends: ends, err: err}
	close(p.done)
	return p
}

// inflight is a table's appended, uncommitted writes, oldest first.
type inflight struct {
	mu         sync.Mutex
	txns       []*pkTxn
	committing bool
	err        error // a commit failed: the state lags the log until the table is reopened
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

// add queues p for commit, by commit, after the writes queued before it.
// The caller holds p's buckets' locks.
func (f *inflight) add(p *pkTxn, commit func(*pkTxn) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.txns = append(f.txns, p)
	if !f.committing {
		f.committing = true
		go f.commitAll(commit)
	}
}

// commitAll commits the queued writes in order until none is left. After a
// failure every queued write fails too: each was merged on top of it.
func (f *inflight) commitAll(commit func(*pkTxn) error) {
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
			err = commit(p)
		} else {
			p.txn.Abort()
		}
		f.mu.Lock()
		if err != nil && f.err == nil {
			f.err = err
		}
		f.txns = f.txns[1:]
		f.mu.Unlock()
		p.err = err
		close(p.done)
	}
}

// drain waits until no write on any of buckets is in flight. The caller
// holds the buckets' locks, so none starts meanwhile.
func (f *inflight) drain(buckets []int) {
	f.mu.Lock()
	var last *pkTxn
	for _, p := range f.txns {
		if overlaps(p.buckets, buckets) {
			last = p
		}
	}
	f.mu.Unlock()
	if last != nil {
		<-last.done // commits are in order: the earlier ones are done too
	}
}

func overlaps(a, b []int) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// commitPK commits a write's state change once its changelog is durable,
// with each bucket's new applied offset.
func commitPK(p *pkTxn) error {
	res, err := p.log.Wait()
	if err != nil || res.Duplicate {
		// A duplicate is a retried batch: the original's state is there.
		p.txn.Abort()
		p.ends = res.Ends
		return err
	}
	for _, b := range p.buckets {
		if err := p.txn.SetApplied(p.table, b, res.Ends[b]); err != nil {
			p.txn.Abort()
			return err
		}
	}
	p.ends = res.Ends
	if err := p.txn.Commit(); err != nil {
		return errs.New(errs.Unavailable, "commit the state of table %d: %w", p.table, err)
	}
	return nil
}
