package logstore

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/parallel"
)

// Frame is one batch read back from the log, with the bytes of the columns
// that were asked for.
type Frame struct {
	BaseOffset int64
	NextOffset int64
	CommitTs   int64 // unix ms
	SchemaID   int32
	Rows       int
	// ChangeTypes has one entry per row for changelog frames, nil otherwise.
	ChangeTypes []byte
	WriterID    string
	// Stats is the frame's statistics block (nil if it has none).
	Stats []byte
	// Skipped is set when the reader's skip function ruled the frame out:
	// its columns were not read, only its offsets are known.
	Skipped bool

	path     string // the segment file and position the frame was read from
	pos      int64
	bucket   int
	codec    Codec
	byBuffer bool // compressed columns are compressed by Arrow buffer
	cols     []int
	metas    [][]byte
	bodies   [][]byte
	rawLens  []int
}

// Record decodes the frame's columns into a record of schema, whose fields
// are the projected columns in order.
func (f *Frame) Record(d *Decoder, schema *arrow.Schema) (arrow.RecordBatch, error) {
	arrs := make([]arrow.Array, len(f.cols))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	failed := make([]error, len(f.cols))
	decode := func(i int) {
		c := f.cols[i]
		if f.rawLens[i] == missingColumn {
			arrs[i] = d.Nulls(c, f.Rows)
			return
		}
		// The bytes matched their checksum: a column that does not decode
		// was written so, and is as lost as a damaged one.
		a, err := d.Column(c, f.metas[i], f.bodies[i], f.codec, f.rawLens[i], f.byBuffer)
		switch {
		case err != nil:
			failed[i] = corruptFrame(f.path, f.pos, f.bucket, fmt.Sprintf("the frame at offset %d: %v", f.BaseOffset, err))
		case a.Len() != f.Rows:
			a.Release()
			failed[i] = corruptFrame(f.path, f.pos, f.bucket, fmt.Sprintf("the frame at offset %d: column %d has %d rows, want %d", f.BaseOffset, c, a.Len(), f.Rows))
		default:
			arrs[i] = a
		}
	}
	if f.codec == CodecNone || f.compressed() < parallelDecompressBytes {
		for i := range f.cols {
			decode(i)
		}
	} else {
		// Decompressing is the bulk of reading a compressed frame.
		parallel.For(len(f.cols), decode)
	}
	if err := errors.Join(failed...); err != nil {
		return nil, err
	}
	return array.NewRecordBatch(schema, arrs, int64(f.Rows)), nil
}

// missingColumn marks, in Frame.rawLens, a column the frame was written
// without.
const missingColumn = -1

// parallelDecompressBytes is the compressed size from which a frame's columns
// are decoded concurrently.
const parallelDecompressBytes = 256 << 10

// compressed returns the bytes of the frame's compressed column bodies.
func (f *Frame) compressed() int {
	n := 0
	for i, b := range f.bodies {
		if f.rawLens[i] > 0 {
			n += len(b)
		}
	}
	return n
}

// Reader reads one bucket's frames in offset order.
type Reader struct {
	t    *Table
	b    *bucket
	cols []int // projection; nil reads every column
	skip func(stats []byte, rows int) bool
	next int64 // next offset to deliver
	seg  *segment
	pos  int64 // position in seg of the next frame to read
	head int   // bytes to read first: the last frame's prefix length

	// admit, if set, is told the memory a frame takes before it is read.
	admit func(bytes int64) error
}

// NewReader returns a reader of bucket from offset start, reading the columns
// cols (nil for all). start must lie in [earliest, high watermark].
func (t *Table) NewReader(bucket int, start int64, cols []int) (*Reader, error) {
	if bucket < 0 || bucket >= len(t.buckets) {
		return nil, errs.New(errs.InvalidArgument, "bucket %d does not exist (the table has %d)", bucket, len(t.buckets))
	}
	b := t.buckets[bucket]
	if hw, first := b.hw.Load(), t.EarliestOffset(bucket); start < first || start > hw {
		return nil, errs.New(errs.OutOfRange, "offset %d of bucket %d is outside the retained range [%d, %d]", start, bucket, first, hw)
	}
	return &Reader{t: t, b: b, cols: cols, next: start}, nil
}

// SkipIf makes the reader pass over, without reading their columns, the
// frames for which skip reports true given their statistics block and row
// count. Such frames come back from Next with Skipped set.
func (r *Reader) SkipIf(skip func(stats []byte, rows int) bool) { r.skip = skip }

// Admit makes the reader call admit before it reads a frame's columns, with
// the memory the frame will take: its columns as read plus as decoded. An
// error from admit is Next's. Frames Next passes over on the way to its
// start offset are admitted too, and then dropped.
func (r *Reader) Admit(admit func(bytes int64) error) { r.admit = admit }

// Offset returns the offset the reader will deliver next.
func (r *Reader) Offset() int64 { return r.next }

// Next returns the next frame that starts below limit, or nil when the reader
// has reached limit (which must not exceed the high watermark). A frame that
// holds the reader's offset in its middle is returned whole; the caller skips
// the rows before Offset().
func (r *Reader) Next(limit int64) (*Frame, error) {
	if r.next >= limit {
		return nil, nil
	}
	if err := r.locate(); err != nil {
		return nil, err
	}
	if r.next >= limit {
		return nil, nil // locate passed over missing offsets to limit
	}
	if f := r.skipSegment(limit); f != nil {
		return f, nil
	}
	for {
		f, size, err := r.readFrame()
		if err != nil {
			return nil, err
		}
		if f.BaseOffset > r.next {
			// Frames follow each other, and an index entry leads to one
			// at or before the offset: the offsets between are missing.
			return nil, r.corrupt(fmt.Sprintf("the frame there starts at offset %d; offset %d is missing", f.BaseOffset, r.next))
		}
		r.pos += size
		if f.NextOffset <= r.next {
			continue // before the start offset
		}
		r.next = f.NextOffset
		return f, nil
	}
}

// Wait blocks until the high watermark is above the reader's offset, ctx is
// done, or the log closes.
func (r *Reader) Wait(ctx context.Context) error {
	ch := r.b.tail(r.next)
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HighWatermark returns the bucket's current high watermark.
func (r *Reader) HighWatermark() int64 { return r.b.hw.Load() }

// Close releases the reader's segment.
func (r *Reader) Close() {
	if r.seg != nil {
		r.seg.release()
		r.seg = nil
	}
}

// locate makes sure r.seg is the segment that holds r.next.
func (r *Reader) locate() error {
	s := r.b.segmentFor(r.next)
	if s == nil {
		if r.seg != nil {
			return nil // retention removed the segment under us; it is still open: read on
		}
		return errs.New(errs.DataLoss, "offset %d of bucket %d is no longer retained", r.next, r.b.id)
	}
	if sealed, end, _, _ := s.sealedSummary(); sealed && r.next >= end {
		// Offsets past a sealed segment's frames, below the next one's
		// name: a roll before issue 28 left them out (dropMisnamedTail).
		// No frame holds them; the log goes on at the next segment.
		later := r.b.segmentAfter(s)
		s.release()
		if later == nil {
			return errs.New(errs.DataLoss, "offset %d of bucket %d is no longer retained", r.next, r.b.id)
		}
		s, r.next = later, later.base
	}
	if s == r.seg {
		s.release()
		return nil
	}
	r.Close()
	r.seg, r.pos = s, s.seekOffset(r.next)
	return nil
}

// skipSegment passes over the rest of a sealed segment whose summary the
// skip function rules out, when the reader is at its start and the segment
// ends within limit.
func (r *Reader) skipSegment(limit int64) *Frame {
	if r.skip == nil || r.next != r.seg.base {
		return nil
	}
	sealed, next, rows, summary := r.seg.sealedSummary()
	if !sealed || summary == nil || next > limit || next <= r.next || !r.skip(summary, int(rows)) {
		return nil
	}
	f := &Frame{BaseOffset: r.next, NextOffset: next, Skipped: true}
	r.next = next
	return f
}

// minHead is the least a reader reads first. A reader then reads as much as
// the previous frame's prefix (header, writer id, column directory,
// statistics, change types): usually the whole prefix in one read, and not
// much more, so that skipping a frame costs little.
const minHead = 512

// readFrame reads the frame at the reader's position: its prefix and the
// columns asked for, each verified against its checksum before anything
// in it is used (docs/format/log-segment.md, Frame). A frame written
// before column checksums is read and verified whole.
func (r *Reader) readFrame() (*Frame, int64, error) {
	head, err := r.readAt(max(r.head, minHead), r.pos, true)
	if err != nil {
		return nil, 0, err
	}
	h, err := parseHeader(head)
	if err != nil {
		return nil, 0, r.corrupt(err.Error())
	}
	r.head = h.verifiedLen()
	if r.head > len(head) {
		if head, err = r.readAt(r.head, r.pos, false); err != nil {
			return nil, 0, r.pastEnd(&h, err)
		}
	}
	if problem := verifyHead(&h, head); problem != "" {
		return nil, 0, r.corrupt(problem)
	}
	p, err := parsePrefix(&h, head)
	if err != nil {
		return nil, 0, r.corrupt(err.Error())
	}
	f := &Frame{
		BaseOffset: h.baseOffset,
		NextOffset: h.nextOffset(),
		CommitTs:   h.commitTs,
		SchemaID:   h.schemaID,
		Rows:       int(h.recordCount),
		WriterID:   p.writerID,
		path:       r.seg.logPath,
		pos:        r.pos,
		bucket:     r.b.id,
	}
	if len(p.stats) > 0 {
		f.Stats = append([]byte(nil), p.stats...)
	}
	if r.skip != nil && r.skip(f.Stats, f.Rows) {
		f.Skipped = true
		return f, int64(h.length), nil
	}
	if p.changeTypes != nil {
		f.ChangeTypes = append([]byte(nil), p.changeTypes...)
	}
	if r.admit != nil {
		if err := r.admit(p.memory(r.cols, int(h.columns))); err != nil {
			return nil, 0, err
		}
	}
	f.cols = r.cols
	if f.cols == nil {
		f.cols = make([]int, h.columns)
		for i := range f.cols {
			f.cols[i] = i
		}
	}
	f.codec, f.byBuffer = h.codec(), h.byBuffer()
	f.metas = make([][]byte, len(f.cols))
	f.bodies = make([][]byte, len(f.cols))
	f.rawLens = make([]int, len(f.cols))

	// Read the wanted columns, one read per run of adjacent columns. Bytes
	// already in head are reused.
	// Columns the frame does not have were added to the table after it was
	// written: they read as NULL (rawLens -1).
	for i := 0; i < len(f.cols); {
		c := f.cols[i]
		if c < 0 {
			return nil, 0, fmt.Errorf("frame at offset %d: column %d asked for", h.baseOffset, c)
		}
		if c >= int(h.columns) {
			f.rawLens[i] = missingColumn
			i++
			continue
		}
		j := i + 1
		for j < len(f.cols) && f.cols[j] == f.cols[j-1]+1 && f.cols[j] < int(h.columns) {
			j++
		}
		lastCol := f.cols[j-1]
		from := int64(p.colOffsets[c])
		to := int64(p.colOffsets[lastCol]) + int64(p.metaLens[lastCol]) + int64(p.bodyLens[lastCol])
		var run []byte
		if to <= int64(len(head)) {
			run = head[from:to]
		} else if run, err = r.readAt(int(to-from), r.pos+from, false); err != nil {
			return nil, 0, r.pastEnd(&h, err)
		}
		for k := i; k < j; k++ {
			c := f.cols[k]
			off := int64(p.colOffsets[c]) - from
			col := run[off : off+int64(p.metaLens[c])+int64(p.bodyLens[c])]
			if h.columnCRCs() {
				if problem := p.verifyColumn(c, col); problem != "" {
					return nil, 0, r.corrupt(problem)
				}
			}
			f.metas[k], f.bodies[k] = col[:p.metaLens[c]], col[p.metaLens[c]:]
			f.rawLens[k] = int(p.rawLens[c])
		}
		i = j
	}
	return f, int64(h.length), nil
}

// readAt reads up to n bytes at pos into a fresh buffer (short reads at the
// end of the file are fine when short is set).
func (r *Reader) readAt(n int, pos int64, short bool) ([]byte, error) {
	buf := make([]byte, n)
	m, err := r.seg.f.ReadAt(buf, pos)
	r.t.bytesRead.Add(int64(m))
	if err == io.EOF && short && m >= fixedHeaderSize {
		err = nil
	}
	if err == io.EOF {
		// Only a segment that retention removed ends before the high
		// watermark: what the reader wanted next has expired.
		return nil, errs.New(errs.DataLoss, "offset %d of bucket %d expired while the scan was open", r.next, r.b.id)
	}
	if err != nil {
		return nil, storageError(err, "read %s at %d", r.seg.logPath, pos)
	}
	return buf[:m], nil
}

// pastEnd is the error of a read of the frame whose header h was read: its
// file ending in the frame means the header is damaged.
func (r *Reader) pastEnd(h *header, err error) error {
	if errs.KindOf(err) == errs.DataLoss {
		return r.corrupt(runsPastEnd(h))
	}
	return err
}

// corrupt is the error of the damaged frame at the reader's position.
func (r *Reader) corrupt(problem string) error {
	return corruptFrame(r.seg.logPath, r.pos, r.b.id, problem)
}

// corruptFrame is the error of a read that found a damaged frame: it names
// the file and the byte, as recovery's CorruptError does.
func corruptFrame(path string, pos int64, bucket int, problem string) error {
	return errs.New(errs.DataLoss, "corrupt log segment %s at byte %d (bucket %d): %s", path, pos, bucket, problem)
}

// OffsetForTime returns the first offset of bucket whose batch was committed
// at or after ts (unix ms), or the high watermark when there is none.
func (t *Table) OffsetForTime(bucket int, ts int64) (int64, error) {
	b := t.buckets[bucket]
	hw := b.hw.Load()
	for _, s := range b.segments() {
		if !s.acquire() {
			continue
		}
		off, found, err := s.firstAtOrAfter(ts, hw, bucket)
		s.release()
		if err != nil || found {
			return off, err
		}
	}
	return hw, nil
}

// firstAtOrAfter scans the segment's frames below hw from the index entry
// before ts for the first one committed at or after ts.
func (s *segment) firstAtOrAfter(ts, hw int64, bucket int) (int64, bool, error) {
	pos, next := s.seekTime(ts)
	for next < hw {
		h, err := s.verifiedHeader(pos, bucket)
		switch {
		case err == io.EOF:
			return 0, false, nil // the segment ends; hw is in a later one
		case err != nil:
			return 0, false, err
		case h.baseOffset != next:
			return 0, false, corruptFrame(s.logPath, pos, bucket, fmt.Sprintf("the frame there starts at offset %d, want %d", h.baseOffset, next))
		case h.commitTs >= ts:
			return h.baseOffset, true, nil
		}
		pos, next = pos+int64(h.length), h.nextOffset()
	}
	return 0, false, nil
}

// verifiedHeader reads the header of the frame at pos, a frame below the
// high watermark, and checks it (verifyHead). It returns io.EOF when the
// file ends at pos.
func (s *segment) verifiedHeader(pos int64, bucket int) (header, error) {
	fixed := make([]byte, fixedHeaderSize)
	n, err := s.f.ReadAt(fixed, pos)
	switch {
	case n == 0 && err == io.EOF:
		return header{}, io.EOF
	case n < fixedHeaderSize && err == io.EOF:
		return header{}, corruptFrame(s.logPath, pos, bucket, cutShort(int64(n)))
	case n < fixedHeaderSize:
		return header{}, storageError(err, "read %s at %d", s.logPath, pos)
	}
	h, err := parseHeader(fixed)
	if err != nil {
		return header{}, corruptFrame(s.logPath, pos, bucket, err.Error())
	}
	head := make([]byte, h.verifiedLen())
	if n, err := s.f.ReadAt(head, pos); n < len(head) && err == io.EOF {
		return header{}, corruptFrame(s.logPath, pos, bucket, runsPastEnd(&h))
	} else if n < len(head) {
		return header{}, storageError(err, "read %s at %d", s.logPath, pos)
	}
	if problem := verifyHead(&h, head); problem != "" {
		return header{}, corruptFrame(s.logPath, pos, bucket, problem)
	}
	return h, nil
}
