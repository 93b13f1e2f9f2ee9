// Package testwait is for tests only: the one way a test waits for a
// condition that other goroutines or processes make true, polling it
// against a deadline instead of sleeping for a guessed time.
package testwait

import (
	"testing"
	"time"
)

// Timeout is how long For waits: long enough for a loaded machine, short
// enough that a condition that never holds fails the test, not the run.
const Timeout = 10 * time.Second

// For polls cond every millisecond until it holds, and fails tb, saying
// what it waited for, if it does not within Timeout.
func For(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(Timeout); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within %v", what, Timeout)
		}
	}
}
