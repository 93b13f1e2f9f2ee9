// Package bucketing assigns rows to buckets with Iceberg's bucket[N] transform,
// so that fluxgate bucket b is lake partition b (PROTOCOL.md §2). It owns the
// hash and the per-type serialization of key values; it does not pick bucket
// keys or bucket counts, nor spread keyless log tables over buckets.
package bucketing

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/murmur3"

	"github.com/fluxgate-io/fluxgate/errs"
)

// Assigner computes the bucket of each row of batches with one schema. It is
// immutable and safe for concurrent use.
type Assigner struct {
	keyCols    []int
	binders    []binder
	numBuckets int
}

// NewAssigner returns an Assigner for batches of schema, bucketed by the
// columns keyCols (in that order) into numBuckets buckets. A key column of a
// type Iceberg cannot hash (nested types, unsigned ints, ...) is errs.InvalidArgument.
func NewAssigner(schema *arrow.Schema, keyCols []int, numBuckets int) (*Assigner, error) {
	if numBuckets < 1 || numBuckets > math.MaxInt32 {
		return nil, errs.New(errs.InvalidArgument, "bucket count %d out of range [1, %d]", numBuckets, math.MaxInt32)
	}
	if len(keyCols) == 0 {
		return nil, errs.New(errs.InvalidArgument, "empty bucket key")
	}
	a := &Assigner{keyCols: append([]int(nil), keyCols...), numBuckets: numBuckets}
	for _, c := range keyCols {
		if c < 0 || c >= schema.NumFields() {
			return nil, errs.New(errs.InvalidArgument, "bucket key column %d out of range: schema has %d columns", c, schema.NumFields())
		}
		f := schema.Field(c)
		b := binderFor(f.Type)
		if b == nil {
			return nil, errs.New(errs.InvalidArgument, "bucket key column %q has type %s, which cannot be a bucket key", f.Name, f.Type)
		}
		a.binders = append(a.binders, b)
	}
	return a, nil
}

// Assign returns the bucket of each row of rec, which must have the schema the
// Assigner was built for. It reuses out when its capacity suffices.
func (a *Assigner) Assign(rec arrow.RecordBatch, out []int32) []int32 {
	n := int(rec.NumRows())
	if cap(out) < n {
		out = make([]int32, n)
	}
	out = out[:n]
	cols := make([]arrow.Array, len(a.keyCols))
	encs := make([]encoder, len(a.keyCols))
	for j, c := range a.keyCols {
		cols[j] = rec.Column(c)
		encs[j] = a.binders[j](cols[j])
	}
	buf := make([]byte, 0, 64) // one scratch for all rows: no allocation per row
	for i := range n {
		buf = buf[:0]
		for j, enc := range encs {
			if cols[j].IsValid(i) { // a NULL component serializes to no bytes
				buf = enc(buf, i)
			}
		}
		out[i] = int32(BucketOf(murmur3.Sum32(buf), a.numBuckets))
	}
	return out
}

// BucketOf is Iceberg's bucket[n] of a 32-bit hash: (hash & MaxInt32) % n.
// n must be positive.
func BucketOf(hash uint32, n int) int {
	return int(hash&math.MaxInt32) % n
}
