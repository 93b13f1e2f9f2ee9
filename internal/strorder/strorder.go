// Package strorder holds the string order helpers that the filter
// (predicate) and the frame statistics (framestats) share: a cheap 8-byte
// key that orders as the strings do, the bound above every string with a
// prefix, and a string view of bytes.
package strorder

import (
	"encoding/binary"
	"unsafe"
)

// PrefixKey returns the first 8 bytes of s as a big-endian integer, padded
// with zeros: PrefixKey(a) < PrefixKey(b) implies a < b.
func PrefixKey[S string | []byte](s S) uint64 {
	if len(s) >= 8 {
		return binary.BigEndian.Uint64([]byte(s[:8]))
	}
	var k uint64
	for i := range 8 {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
}

// Successor returns the smallest string above every string that starts with
// p, and false if there is none (p is all 0xff bytes).
func Successor(p string) (string, bool) {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

// View returns b as a string without copying; the string lives only as
// long as b is unchanged.
func View(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
