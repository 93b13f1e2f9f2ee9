package producer

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// BenchmarkRegister registers new producers' offsets into a store that
// already holds others: a registration's cost should not grow with them.
func BenchmarkRegister(b *testing.B) {
	offs := Offsets{TableID: 1, Buckets: map[int]int64{0: 10, 1: 20, 2: 30, 3: 40}}
	for _, held := range []int{0, 1000, 5000} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) {
			s, err := Open(vfs.Default, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			for i := range held {
				if _, err := s.Register(fmt.Sprint("held-", i), "d.t", offs); err != nil {
					b.Fatal(err)
				}
			}
			defer s.Close()
			i := 0
			for b.Loop() {
				if _, err := s.Register(fmt.Sprint("new-", i), "d.t", offs); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
