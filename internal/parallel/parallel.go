// Package parallel runs the independent pieces of one job (the columns of a
// batch) on all cores.
package parallel

import (
	"runtime"
	"sync"
)

// For calls fn(0), ..., fn(n-1) on up to GOMAXPROCS goroutines and waits for
// them. With one piece, or one core, it calls them in order on the caller's
// goroutine.
func For(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range workers {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	wg.Wait()
}
