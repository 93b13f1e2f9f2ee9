package prefetch

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// count is a source of the numbers 0..n-1, each computed by work(i); it
// counts what it emitted.
func count(n int, emitted *atomic.Int64, work func(i int) (int, error)) Source[int] {
	return func(ctx context.Context, emit func(Work[int]) bool) error {
		for i := range n {
			if !emit(func() (int, error) { return work(i) }) {
				return nil
			}
			emitted.Add(1)
		}
		return nil
	}
}

func identity(i int) (int, error) { return i, nil }

// Results come in the source's order, even when later work finishes first;
// then io.EOF, again on every call.
func TestOrder(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		// Each work but the first waits for the one after it, so that in
		// parallel they finish last to first.
		const n = 8
		finished := make([]chan struct{}, n+1)
		for i := range finished {
			finished[i] = make(chan struct{})
		}
		close(finished[n])
		work := func(i int) (int, error) {
			if parallel {
				<-finished[i+1]
			}
			close(finished[i])
			return i, nil
		}
		var emitted atomic.Int64
		p := Start(t.Context(), Config[int]{Ahead: n, Parallel: parallel}, count(n, &emitted, work))
		for want := range n {
			got, err := p.Next()
			if err != nil || got != want {
				t.Fatalf("parallel %v: result %d is %d, %v", parallel, want, got, err)
			}
		}
		for range 2 {
			if _, err := p.Next(); err != io.EOF {
				t.Fatalf("parallel %v: after the end: %v, want io.EOF", parallel, err)
			}
		}
		p.Close()
	}
}

// The source runs at most Ahead results ahead of the reader (and waits in
// emit with one more).
func TestAheadBound(t *testing.T) {
	const ahead = 3
	var emitted atomic.Int64
	queued := make(chan struct{}, 100)
	src := func(ctx context.Context, emit func(Work[int]) bool) error {
		for i := 0; ; i++ {
			if !emit(func() (int, error) { return i, nil }) {
				return nil
			}
			emitted.Add(1)
			queued <- struct{}{}
		}
	}
	p := Start(t.Context(), Config[int]{Ahead: ahead}, src)
	defer p.Close()
	seen := 0
	for taken := range 5 {
		// Wait until the source is as far ahead as it may be.
		for ; seen < taken+ahead; seen++ {
			<-queued
		}
		if got := int(emitted.Load()) - taken; got != ahead {
			t.Fatalf("%d results queued ahead of the reader, want %d", got, ahead)
		}
		if _, err := p.Next(); err != nil {
			t.Fatal(err)
		}
	}
}

// The first error reaches the reader after the results before it, stops the
// source, and is returned again.
func TestFirstErrorWins(t *testing.T) {
	boom := errors.New("boom")
	for _, parallel := range []bool{false, true} {
		var emitted atomic.Int64
		work := func(i int) (int, error) {
			if i == 2 {
				return 0, boom
			}
			return i, nil
		}
		p := Start(t.Context(), Config[int]{Ahead: 1, Parallel: parallel}, count(1000, &emitted, work))
		for want := range 2 {
			if got, err := p.Next(); err != nil || got != want {
				t.Fatalf("result %d is %d, %v", want, got, err)
			}
		}
		for range 2 {
			if _, err := p.Next(); err != boom {
				t.Fatalf("parallel %v: %v, want boom", parallel, err)
			}
		}
		p.Close()
		if n := emitted.Load(); n >= 1000 {
			t.Fatalf("parallel %v: the source ran on to %d after the error", parallel, n)
		}
	}
}

// A source's error comes after the results it emitted.
func TestSourceError(t *testing.T) {
	boom := errors.New("boom")
	p := Start(t.Context(), Config[int]{Ahead: 4}, func(ctx context.Context, emit func(Work[int]) bool) error {
		emit(func() (int, error) { return 7, nil })
		return boom
	})
	defer p.Close()
	if got, err := p.Next(); got != 7 || err != nil {
		t.Fatalf("first result %d, %v", got, err)
	}
	if _, err := p.Next(); err != boom {
		t.Fatalf("%v, want boom", err)
	}
}

// A panic in work or source fails the stream instead of the process.
func TestPanic(t *testing.T) {
	var emitted atomic.Int64
	p := Start(t.Context(), Config[int]{Ahead: 1, Parallel: true}, count(3, &emitted, func(int) (int, error) { panic("at work") }))
	if _, err := p.Next(); err == nil || !strings.Contains(err.Error(), "at work") {
		t.Fatalf("work's panic: %v", err)
	}
	p.Close()
	p = Start(t.Context(), Config[int]{}, func(context.Context, func(Work[int]) bool) error { panic("at source") })
	if _, err := p.Next(); err == nil || !strings.Contains(err.Error(), "at source") {
		t.Fatalf("source's panic: %v", err)
	}
	p.Close()
}

// Cancelling the context ends the reading; closing releases every result
// computed and not taken, and only those.
func TestCancelAndRelease(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		var emitted, released atomic.Int64
		ctx, cancel := context.WithCancel(t.Context())
		cfg := Config[int]{Ahead: 4, Parallel: parallel, Release: func(int) { released.Add(1) }}
		p := Start(ctx, cfg, count(1_000_000, &emitted, identity))
		for range 3 {
			if _, err := p.Next(); err != nil {
				t.Fatal(err)
			}
		}
		cancel()
		if _, err := p.Next(); err != context.Canceled {
			t.Fatalf("after cancel: %v", err)
		}
		p.Close()
		p.Close()
		// The work emitted and not taken was released; the work not queued
		// was not run.
		if r, e := released.Load(), emitted.Load(); r != e-3 {
			t.Fatalf("parallel %v: %d released of %d emitted, 3 taken", parallel, r, e)
		}
	}
}
