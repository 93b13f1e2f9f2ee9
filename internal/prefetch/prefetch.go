// Package prefetch runs the producing side of an ordered stream ahead of its
// reader: a source yields pieces of work in order on a goroutine of its own,
// each piece is computed (on that goroutine, or each on one of its own), and
// the reader takes the results in the source's order, while at most Ahead
// results wait or are being computed. It owns the goroutines, the bound, the
// order, cancellation and the release of results nobody took; it knows
// nothing of what the results are.
package prefetch

import (
	"context"
	"fmt"
	"io"
)

// Work computes one result.
type Work[T any] func() (T, error)

// A Source yields the stream's work in order: it calls emit once for each
// piece, and returns at its end, with an error (which the reader gets after
// the results emitted before it), or when emit returns false: the pipeline
// stopped and did not run that work, whose resources stay the source's.
type Source[T any] func(ctx context.Context, emit func(Work[T]) bool) error

// Config shapes a Pipeline.
type Config[T any] struct {
	// Ahead bounds the results queued for the reader, waiting or (with
	// Parallel) being computed; the source waits in emit with one more, until
	// there is room.
	Ahead int
	// Parallel computes each piece of work on a goroutine of its own, so that
	// up to Ahead compute at once; otherwise each is computed in turn on the
	// source's goroutine.
	Parallel bool
	// Release frees a result the reader will not take; nil when results hold
	// nothing to free.
	Release func(T)
}

// Pipeline is a running source. Its methods are for one reader goroutine.
type Pipeline[T any] struct {
	cfg     Config[T]
	ctx     context.Context
	cancel  context.CancelFunc
	results chan chan result[T] // in the source's order; closed when the source returned
	srcErr  error               // the source's error; read once results is closed
	err     error               // what ended the reading, returned again by every Next
}

type result[T any] struct {
	v   T
	err error
}

// Start runs src ahead of the reader until it ends, fails, ctx is cancelled
// or the pipeline is closed.
func Start[T any](ctx context.Context, cfg Config[T], src Source[T]) *Pipeline[T] {
	ctx, cancel := context.WithCancel(ctx)
	p := &Pipeline[T]{cfg: cfg, ctx: ctx, cancel: cancel, results: make(chan chan result[T], cfg.Ahead)}
	go p.run(src)
	return p
}

func (p *Pipeline[T]) run(src Source[T]) {
	defer close(p.results)
	// A panic here is outside every caller's recovery: it would end the
	// process, so it ends this stream instead.
	defer func() {
		if r := recover(); r != nil {
			p.srcErr = fmt.Errorf("prefetch: panic: %v", r)
		}
	}()
	p.srcErr = src(p.ctx, p.emit)
}

// emit queues work's result, waiting while Ahead results are queued, and
// then computes it: so no more than Ahead compute at once, and a work the
// pipeline did not queue was not run.
func (p *Pipeline[T]) emit(work Work[T]) bool {
	if p.ctx.Err() != nil {
		return false
	}
	res := make(chan result[T], 1)
	select {
	case p.results <- res:
	case <-p.ctx.Done():
		return false
	}
	if p.cfg.Parallel {
		go func() { res <- compute(work) }()
	} else {
		res <- compute(work)
	}
	return true
}

// compute runs work, making a panic its error.
func compute[T any](work Work[T]) (r result[T]) {
	defer func() {
		if p := recover(); p != nil {
			r = result[T]{err: fmt.Errorf("prefetch: panic: %v", p)}
		}
	}()
	v, err := work()
	return result[T]{v, err}
}

// Next returns the next result. After the last it returns io.EOF, or the
// source's error; after an error (a result's, the source's, or the context's)
// the pipeline stops, and Next returns that error again.
func (p *Pipeline[T]) Next() (T, error) {
	var zero T
	if p.err == nil {
		p.err = p.ctx.Err() // a result waiting does not hide a cancellation
	}
	if p.err != nil {
		return zero, p.err
	}
	select {
	case res, ok := <-p.results:
		if !ok {
			p.err = p.srcErr
			if p.err == nil {
				p.err = io.EOF
			}
			return zero, p.err
		}
		r := <-res
		if r.err != nil {
			p.err = r.err
			p.cancel()
		}
		return r.v, r.err
	case <-p.ctx.Done():
		p.err = p.ctx.Err()
		return zero, p.err
	}
}

// Close stops the source, waits for it and the work it started, and
// releases the results the reader did not take. It may be called again.
func (p *Pipeline[T]) Close() {
	p.cancel()
	for res := range p.results {
		p.release(<-res)
	}
	if p.err == nil {
		p.err = context.Canceled
	}
}

func (p *Pipeline[T]) release(r result[T]) {
	if r.err == nil && p.cfg.Release != nil {
		p.cfg.Release(r.v)
	}
}
