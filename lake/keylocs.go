package lake

import (
	"fmt"
	"math"
	"unsafe"
)

// rowLoc is where a row lives: a file of keyIndex.files and a position in
// it. Both fit 32 bits: files are rolled at the target file size, far below
// 2^32 rows, and a table's index numbers fewer files than that.
type rowLoc struct {
	file, pos uint32
}

func newRowLoc(file int, pos int64) (rowLoc, error) {
	if file > math.MaxUint32 || pos > math.MaxUint32 {
		return rowLoc{}, fmt.Errorf("key index: file %d position %d is beyond 2^32", file, pos)
	}
	return rowLoc{uint32(file), uint32(pos)}, nil
}

// keyLocs maps encoded primary keys to where their rows live, with every
// key of a table in memory, so it is kept small: the keys' bytes go into
// large shared chunks (the map's keys are strings over them, not an
// allocation each), and a location is 8 bytes. A BIGINT key takes about 60
// bytes in all, against 100 as a map of allocated strings to 16-byte
// locations (docs/benchmarks.md). Keys that are deleted or replaced leave
// their bytes in their chunk; once those are more than the live keys' bytes
// the whole is copied afresh.
type keyLocs struct {
	m       map[string]rowLoc // keys point into chunks, never to a caller's bytes
	chunk   []byte            // the chunk new keys are appended to
	live    int               // bytes of the keys in m
	garbage int               // bytes of chunks that no key in m uses
}

// keyChunkSize is the size of a chunk of key bytes.
const keyChunkSize = 256 << 10

func newKeyLocs(hint int) *keyLocs {
	return &keyLocs{m: make(map[string]rowLoc, hint)}
}

func (k *keyLocs) len() int { return len(k.m) }

func (k *keyLocs) get(key []byte) (rowLoc, bool) {
	loc, ok := k.m[string(key)] // no allocation: the compiler looks up with the bytes
	return loc, ok
}

// add maps key to loc if it has no location yet, and reports whether it
// did; the key's bytes are copied.
func (k *keyLocs) add(key []byte, loc rowLoc) bool {
	if _, ok := k.m[string(key)]; ok {
		return false
	}
	k.m[k.intern(key)] = loc
	k.live += len(key)
	return true
}

// set maps key to loc; the key's bytes are copied.
func (k *keyLocs) set(key []byte, loc rowLoc) {
	if _, ok := k.m[string(key)]; ok {
		// The map takes the new key string on an update too, so the old
		// one's bytes become garbage.
		k.garbage += len(key)
		k.live -= len(key)
	}
	k.m[k.intern(key)] = loc
	k.live += len(key)
}

func (k *keyLocs) delete(key []byte) {
	if _, ok := k.m[string(key)]; !ok {
		return
	}
	delete(k.m, string(key))
	k.live -= len(key)
	k.garbage += len(key)
	if k.garbage > keyChunkSize && k.garbage > k.live {
		k.repack()
	}
}

// intern copies key into the current chunk and returns it as a string
// over the chunk's bytes, which are never written again.
func (k *keyLocs) intern(key []byte) string {
	if len(key) == 0 {
		return ""
	}
	if len(k.chunk)+len(key) > cap(k.chunk) {
		if k.chunk != nil {
			k.garbage += cap(k.chunk) - len(k.chunk) // the unused tail
		}
		k.chunk = make([]byte, 0, max(keyChunkSize, len(key)))
	}
	k.chunk = append(k.chunk, key...)
	b := k.chunk[len(k.chunk)-len(key):]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// repack copies the live keys into new chunks and a new map (a Go map does
// not shrink), so that the old chunks are freed.
func (k *keyLocs) repack() {
	fresh := newKeyLocs(len(k.m))
	for key, loc := range k.m {
		fresh.set(unsafe.Slice(unsafe.StringData(key), len(key)), loc)
	}
	*k = *fresh
}
