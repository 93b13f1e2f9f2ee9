// Package memtest is for tests only: the checked Arrow allocator every test
// allocates through, so that a buffer a test or the code under it forgets
// to release fails the test.
package memtest

import (
	"fmt"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Allocator returns a checked allocator that fails tb, when tb ends, if
// anything allocated through it is still held.
func Allocator(tb testing.TB) *memory.CheckedAllocator {
	tb.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	tb.Cleanup(func() { mem.AssertSize(tb, 0) })
	return mem
}

// Shared is the checked allocator of test helpers that have no testing.TB;
// a package whose tests use it runs them through Main.
var Shared = memory.NewCheckedAllocator(memory.NewGoAllocator())

// Main runs a package's tests, as a TestMain does, and fails them if
// anything allocated through Shared is still held when they are done,
// printing where each leaked buffer was allocated.
func Main(m *testing.M) {
	code := m.Run()
	if Shared.CurrentAlloc() != 0 && code == 0 {
		Shared.AssertSize(stderr{}, 0)
		code = 1
	}
	os.Exit(code)
}

// stderr reports the leaks of Shared, which outlive every test, on stderr.
type stderr struct{}

func (stderr) Helper() {}

func (stderr) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "memtest.Shared: "+format+"\n", args...)
}
