package engine

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/logstore"
)

// Reading a bucket's state is iterating pebble and decoding rows into Arrow
// columns, of about equal cost. valueStream iterates on a goroutine of its
// own and hands the values over in chunks, so that on two cores the two
// overlap.

// valueChunk is a run of stored values copied out of the iterator.
type valueChunk struct {
	data []byte
	ends []int // ends[i] is where value i ends in data
}

func (c *valueChunk) value(i int) []byte {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.data[start:c.ends[i]]
}

// chunkValues is the number of values in a chunk; a few chunks in flight
// keep both goroutines busy without holding much of the bucket in memory.
const (
	chunkValues    = 2048
	chunksInFlight = 4
)

type valueStream struct {
	chunks chan *valueChunk
	free   chan *valueChunk
	stop   chan struct{}
	done   chan struct{}
	err    error // of the iteration; read after done is closed
}

// streamValues starts iterating the bucket's rows of snap.
func streamValues(snap *kv.Snapshot, table int64, bucket int) *valueStream {
	s := &valueStream{
		chunks: make(chan *valueChunk, chunksInFlight),
		free:   make(chan *valueChunk, chunksInFlight+1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	go s.run(snap, table, bucket)
	return s
}

func (s *valueStream) run(snap *kv.Snapshot, table int64, bucket int) {
	defer close(s.done)
	defer close(s.chunks)
	c := s.chunk()
	s.err = snap.Rows(table, bucket, func(_, value []byte) error {
		c.data = append(c.data, value...)
		c.ends = append(c.ends, len(c.data))
		if len(c.ends) < chunkValues {
			return nil
		}
		if !s.hand(c) {
			return errStopScan
		}
		c = s.chunk()
		return nil
	})
	if s.err == nil && len(c.ends) > 0 {
		s.hand(c)
	}
}

// chunk returns an empty chunk, reusing one the reader is done with.
func (s *valueStream) chunk() *valueChunk {
	select {
	case c := <-s.free:
		c.data, c.ends = c.data[:0], c.ends[:0]
		return c
	default:
		return &valueChunk{}
	}
}

// hand passes c to the reader; false means the reader stopped.
func (s *valueStream) hand(c *valueChunk) bool {
	select {
	case s.chunks <- c:
		return true
	case <-s.stop:
		return false
	}
}

// next returns the next chunk, or nil at the end. The chunk stays valid
// until the next call.
func (s *valueStream) next(prev *valueChunk) *valueChunk {
	if prev != nil {
		select {
		case s.free <- prev:
		default:
		}
	}
	return <-s.chunks
}

// close stops the iteration and returns its error, if it failed.
func (s *valueStream) close() error {
	close(s.stop)
	<-s.done
	if s.err == errStopScan {
		return nil
	}
	return s.err
}

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
}

// directFrames reads and decodes frames on the caller's goroutine.
type directFrames struct {
	rs     *ReadStream
	reader *logstore.Reader
}

func (d directFrames) next(limit int64) (decodedFrame, error) {
	out := decodedFrame{from: d.reader.Offset()}
	f, err := d.reader.Next(limit)
	if err != nil || f == nil {
		return out, err
	}
	return d.decode(out, f)
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

// framesAheadCount is how many frames may be decoding or wait to be sent.
const framesAheadCount = 2

// framesAhead reads the frames of a range on a goroutine of its own and
// decodes each on one of its own, so that two frames decode at once while
// the last one is sent; they are handed out in order.
type framesAhead struct {
	frames chan chan frameOrErr
	stop   chan struct{}
	done   chan struct{}
}

type frameOrErr struct {
	decodedFrame
	err error
}

// readAhead reads and decodes the frames below stop, which the log holds
// already.
func readAhead(src directFrames, stop int64) *framesAhead {
	a := &framesAhead{frames: make(chan chan frameOrErr, framesAheadCount-1), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		defer close(a.frames)
		for {
			from := src.reader.Offset()
			f, err := src.reader.Next(stop)
			d := make(chan frameOrErr, 1)
			select {
			case a.frames <- d:
			case <-a.stop:
				return
			}
			if err != nil || f == nil {
				d <- frameOrErr{decodedFrame{from: from}, err}
				return
			}
			go func() {
				// A panic here is outside every handler's recovery: it would
				// end the process, so it fails this read instead.
				defer func() {
					if p := recover(); p != nil {
						d <- frameOrErr{decodedFrame{from: from}, fmt.Errorf("decode the frame at offset %d: panic: %v", from, p)}
					}
				}()
				out, err := src.decode(decodedFrame{from: from}, f)
				d <- frameOrErr{out, err}
			}()
		}
	}()
	return a
}

func (a *framesAhead) next(int64) (decodedFrame, error) {
	d, ok := <-a.frames
	if !ok {
		return decodedFrame{}, fmt.Errorf("read ahead: no frame after the end")
	}
	r := <-d
	return r.decodedFrame, r.err
}

// close stops the reading goroutine and releases the frames decoded for
// nothing.
func (a *framesAhead) close() {
	close(a.stop)
	<-a.done
	for d := range a.frames {
		if r := <-d; r.rec != nil {
			r.rec.Release()
		}
	}
}
