// Package parallel runs the independent pieces of one job (the columns of a
// batch) on all cores.
package parallel

import (
	"runtime"

	"golang.org/x/sync/errgroup"
)

// For calls fn(0), ..., fn(n-1) on up to GOMAXPROCS goroutines and waits for
// them. With one piece, or one core, it calls them in order on the caller's
// goroutine: the common case of a narrow batch pays for no goroutine.
func For(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var g errgroup.Group
	g.SetLimit(workers)
	for i := range n {
		g.Go(func() error {
			fn(i)
			return nil
		})
	}
	_ = g.Wait() // the pieces return no error
}
