package lake

import (
	"encoding/binary"
	"testing"
)

// keyLocs keeps every key's location through adds, updates and deletes,
// also across the repacks that many deletes cause.
func TestKeyLocs(t *testing.T) {
	const n = 100_000
	key := func(i int) []byte { return binary.BigEndian.AppendUint64([]byte("k"), uint64(i)) }
	k := newKeyLocs(0)
	for i := range n {
		if !k.add(key(i), rowLoc{1, uint32(i)}) {
			t.Fatalf("add of new key %d reported it present", i)
		}
	}
	if k.add(key(7), rowLoc{9, 9}) {
		t.Error("add of a present key reported it added")
	}
	for i := 0; i < n; i += 2 {
		k.set(key(i), rowLoc{2, uint32(i)}) // even keys move
	}
	for i := 1; i < n; i += 2 {
		k.delete(key(i)) // odd keys go: more bytes garbage than live, a repack
	}
	k.delete(key(n + 1)) // absent: nothing
	if k.len() != n/2 {
		t.Fatalf("%d keys after deleting half of %d, want %d", k.len(), n, n/2)
	}
	if k.garbage > k.live {
		t.Errorf("garbage %d bytes > live %d bytes after the deletes: not repacked", k.garbage, k.live)
	}
	for i := range n {
		loc, ok := k.get(key(i))
		switch {
		case i%2 == 1 && ok:
			t.Fatalf("deleted key %d is at %v", i, loc)
		case i%2 == 0 && (!ok || loc != rowLoc{2, uint32(i)}):
			t.Fatalf("key %d is at %v (%v), want {2 %d}", i, loc, ok, i)
		}
	}
	if _, err := newRowLoc(0, 1<<32); err == nil {
		t.Error("a position beyond 2^32 was accepted")
	}
}
