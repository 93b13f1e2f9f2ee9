package scanread

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/internal/prefetch"
	"github.com/fluxgate-io/fluxgate/logstore"
)

// A bounded scan of a compressed log spends most of its time decompressing
// frames. framesAhead reads and decodes a range's next frames on a goroutine
// of its own while the last one is sent, so that decompressing overlaps the
// transport.

// frameSource yields a range's frames, each with the offset the reader was
// at before it and, unless the frame was skipped, its record of the need
// columns.
type frameSource interface {
	next(limit int64) (decodedFrame, error)
	close()
}

type decodedFrame struct {
	f          *logstore.Frame // nil at the limit
	from       int64
	unfiltered bool // the frame's rows need no filtering
	rec        arrow.RecordBatch
	msg        *logstore.Message // instead of rec, when the frame may go out as stored
	held       int64             // of the stream's Memory, for this frame
}

// directFrames reads and decodes frames on the caller's goroutine.
type directFrames struct {
	rs     *Stream
	reader *logstore.Reader
	mem    *frameMemory // nil without a Memory
}

func (d directFrames) next(limit int64) (decodedFrame, error) {
	out := decodedFrame{from: d.reader.Offset()}
	f, err := d.reader.Next(limit)
	out.held = d.take()
	if err != nil || f == nil {
		return out, err
	}
	return d.decode(out, f)
}

// take is what was admitted for the frame the reader read last.
func (d directFrames) take() int64 {
	if d.mem == nil {
		return 0
	}
	return d.mem.take()
}

// decode decodes f, read from offset out.from, unless it was skipped.
func (d directFrames) decode(out decodedFrame, f *logstore.Frame) (decodedFrame, error) {
	out.f = f
	if f.Skipped {
		return out, nil
	}
	if out.unfiltered = d.rs.unfiltered(f); out.unfiltered {
		if msg, ok := d.rs.message(f); ok {
			out.msg = &msg
			return out, nil
		}
	}
	var err error
	out.rec, err = d.rs.build(f)
	return out, err
}

func (directFrames) close() {}

// framesQueued is how many frames may be read and decoding ahead of the one
// the reader waits for.
const framesQueued = 1

// framesAhead reads the frames of a range on a goroutine of its own and
// decodes each on one of its own, so that frames decode while the last one
// is sent; they are handed out in order.
type framesAhead struct {
	frames *prefetch.Pipeline[decodedFrame]
}

// readAhead reads and decodes the frames below stop, which the log holds
// already.
func readAhead(ctx context.Context, src directFrames, stop int64) *framesAhead {
	cfg := prefetch.Config[decodedFrame]{Ahead: framesQueued, Parallel: true, Release: func(d decodedFrame) {
		if d.rec != nil {
			d.rec.Release()
		}
		src.mem.release(d.held)
	}}
	return &framesAhead{prefetch.Start(ctx, cfg, func(ctx context.Context, emit func(prefetch.Work[decodedFrame]) bool) error {
		if src.mem != nil {
			src.mem.ctx = ctx // closing the pipeline ends a wait for memory
		}
		for {
			from := src.reader.Offset()
			f, err := src.reader.Next(stop)
			held := src.take()
			if err != nil {
				src.mem.release(held)
				return err
			}
			if f == nil {
				emit(func() (decodedFrame, error) { return decodedFrame{from: from}, nil })
				return nil
			}
			if !emit(func() (decodedFrame, error) { return src.decode(decodedFrame{from: from, held: held}, f) }) {
				src.mem.release(held)
				return nil
			}
		}
	})}
}

func (a *framesAhead) next(int64) (decodedFrame, error) {
	d, err := a.frames.Next()
	if err == io.EOF {
		return decodedFrame{}, fmt.Errorf("read ahead: no frame after the end")
	}
	return d, err
}

// close stops the reading goroutine and releases the frames decoded for
// nothing.
func (a *framesAhead) close() { a.frames.Close() }
