package merge

import (
	"encoding/binary"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/fluxgate-io/fluxgate/errs"
)

// bitmaps is a Write's scratch space for rbm32 and rbm64, reused across rows:
// the decoded bitmaps and the copies of the bytes they were decoded from.
type bitmaps struct {
	acc32, in32 roaring.Bitmap
	acc64, in64 roaring64.Bitmap
	accBuf      []byte
	inBuf       []byte
}

// orBitmap32 is rbm32: the union of two 32-bit RoaringBitmaps in the portable
// serialization (RoaringFormatSpec), which Java's RoaringBitmap, CRoaring and
// pyroaring read and write. Like Fluss, it run-optimizes the union, so that
// dense ids (as auto-increment assigns them) become runs.
func orBitmap32(bm *bitmaps, acc, in any) (out any, err error) {
	x, y, err := bitmapBytes(acc, in)
	if err != nil {
		return nil, err
	}
	defer func() {
		bm.acc32.Clear()
		bm.in32.Clear()
		if r := recover(); r != nil {
			out, err = nil, errs.New(errs.InvalidArgument, "not a serialized 32-bit RoaringBitmap: %v", r)
		}
	}()
	if err := read32(&bm.acc32, &bm.accBuf, x, "the stored value", errs.FailedPrecondition); err != nil {
		return nil, err
	}
	if err := read32(&bm.in32, &bm.inBuf, y, "the written value", errs.InvalidArgument); err != nil {
		return nil, err
	}
	if bm.in32.AndCardinality(&bm.acc32) == bm.in32.GetCardinality() {
		// Nothing new (a repeat visitor of a distinct count): the stored
		// bitmap is the union as it is.
		return x, nil
	}
	bm.acc32.Or(&bm.in32)
	bm.acc32.RunOptimize()
	w := sliceWriter(make([]byte, 0, bm.acc32.GetSerializedSizeInBytes()))
	if _, err := bm.acc32.WriteTo(&w); err != nil {
		return nil, errs.New(errs.Internal, "serialize a 32-bit RoaringBitmap: %w", err)
	}
	return []byte(w), nil
}

// orBitmap64 is rbm64: the union of two 64-bit RoaringBitmaps in the portable
// 64-bit serialization (RoaringFormatSpec's extension for 64-bit
// implementations: Java's serializePortable, CRoaring's and pyroaring's
// portable format). Fluss itself writes Java's Roaring64Bitmap.serialize
// format, which only Java reads; fluxgate uses the portable one (PROTOCOL.md
// §5.1) so that Python and Go readers decode the values too.
func orBitmap64(bm *bitmaps, acc, in any) (out any, err error) {
	x, y, err := bitmapBytes(acc, in)
	if err != nil {
		return nil, err
	}
	defer func() {
		bm.acc64.Clear()
		bm.in64.Clear()
		if r := recover(); r != nil {
			out, err = nil, errs.New(errs.InvalidArgument, "not a serialized 64-bit RoaringBitmap: %v", r)
		}
	}()
	if err := read64(&bm.acc64, &bm.accBuf, x, "the stored value", errs.FailedPrecondition); err != nil {
		return nil, err
	}
	if err := read64(&bm.in64, &bm.inBuf, y, "the written value", errs.InvalidArgument); err != nil {
		return nil, err
	}
	bm.acc64.Or(&bm.in64)
	bm.acc64.RunOptimize()
	w := sliceWriter(make([]byte, 0, bm.acc64.GetSerializedSizeInBytes()))
	if _, err := bm.acc64.WriteTo(&w); err != nil {
		return nil, errs.New(errs.Internal, "serialize a 64-bit RoaringBitmap: %w", err)
	}
	return []byte(w), nil
}

// checkBitmap32 validates a bitmap that is stored without a union: the first
// value of a key, or one replacing a NULL. Fluss stores those unvalidated, so
// that bad bytes only fail the next write of the key, and then every one;
// fluxgate rejects them up front.
func checkBitmap32(bm *bitmaps, v any) (err error) {
	b, ok := v.([]byte)
	if !ok {
		return wrongType[[]byte](v, v)
	}
	defer func() {
		bm.in32.Clear()
		if r := recover(); r != nil {
			err = errs.New(errs.InvalidArgument, "not a serialized 32-bit RoaringBitmap: %v", r)
		}
	}()
	return read32(&bm.in32, &bm.inBuf, b, "the written value", errs.InvalidArgument)
}

func checkBitmap64(bm *bitmaps, v any) (err error) {
	b, ok := v.([]byte)
	if !ok {
		return wrongType[[]byte](v, v)
	}
	defer func() {
		bm.in64.Clear()
		if r := recover(); r != nil {
			err = errs.New(errs.InvalidArgument, "not a serialized 64-bit RoaringBitmap: %v", r)
		}
	}()
	return read64(&bm.in64, &bm.inBuf, b, "the written value", errs.InvalidArgument)
}

func bitmapBytes(acc, in any) (x, y []byte, err error) {
	x, ok1 := acc.([]byte)
	y, ok2 := in.([]byte)
	if !ok1 || !ok2 {
		return nil, nil, wrongType[[]byte](acc, in)
	}
	return x, y, nil
}

// read32 decodes a bitmap and checks that it is whole, valid and nothing
// follows it. A bad written value is Invalid; a bad stored one (only
// OVERWRITE can store one) is Precondition: the key's state forbids
// aggregating into it.
//
// The library decodes without copying, viewing the bytes as uint16 and uint64
// slices (its containers are then copy-on-write); it decodes a copy in buf,
// which has slack after the data, because a view that ends exactly at the end
// of an allocation fails the race detector's pointer checks.
func read32(dst *roaring.Bitmap, buf *[]byte, b []byte, what string, kind errs.Kind) error {
	c := padded(buf, b)
	n, err := dst.FromBuffer(c)
	if err == nil && n != int64(len(c)) {
		err = fmt.Errorf("%d bytes follow the bitmap", int64(len(c))-n)
	}
	if err == nil {
		err = dst.Validate()
	}
	if err != nil {
		return errs.New(kind, "%s is not a serialized 32-bit RoaringBitmap: %v", what, err)
	}
	return nil
}

func read64(dst *roaring64.Bitmap, buf *[]byte, b []byte, what string, kind errs.Kind) error {
	var n int64
	var err error
	// The library sizes its arrays by the header's count before reading any
	// bucket: check it against the input first (a bucket is a 4-byte key and
	// a 32-bit bitmap of at least 8 bytes), or a bad count exhausts memory.
	if len(b) < 8 {
		err = fmt.Errorf("%d bytes is too short", len(b))
	} else if count := binary.LittleEndian.Uint64(b); count > uint64(len(b)-8)/12 {
		err = fmt.Errorf("it claims %d buckets in %d bytes", count, len(b))
	} else {
		n, err = dst.FromUnsafeBytes(padded(buf, b))
	}
	if err == nil && n != int64(len(b)) {
		err = fmt.Errorf("%d bytes follow the bitmap", int64(len(b))-n)
	}
	if err == nil {
		err = dst.Validate()
	}
	if err != nil {
		return errs.New(kind, "%s is not a serialized 64-bit RoaringBitmap: %v", what, err)
	}
	return nil
}

// padded copies b into *buf, keeping at least 8 bytes of capacity after it.
func padded(buf *[]byte, b []byte) []byte {
	if cap(*buf) < len(b)+8 {
		*buf = make([]byte, 0, len(b)+len(b)/4+8)
	}
	*buf = append((*buf)[:0], b...)
	return *buf
}

// sliceWriter appends to a byte slice sized in advance.
type sliceWriter []byte

func (w *sliceWriter) Write(p []byte) (int, error) {
	*w = append(*w, p...)
	return len(p), nil
}
