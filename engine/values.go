package engine

import (
	"context"
	"io"

	"github.com/fluxgate-io/fluxgate/internal/prefetch"
	"github.com/fluxgate-io/fluxgate/kv"
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
	chunks *prefetch.Pipeline[*valueChunk]
	free   chan *valueChunk // chunks the reader is done with, to fill again
}

// streamValues starts iterating the bucket's rows of snap.
func streamValues(ctx context.Context, snap *kv.Snapshot, table int64, bucket int) *valueStream {
	s := &valueStream{free: make(chan *valueChunk, chunksInFlight+1)}
	s.chunks = prefetch.Start(ctx, prefetch.Config[*valueChunk]{Ahead: chunksInFlight}, func(ctx context.Context, emit func(prefetch.Work[*valueChunk]) bool) error {
		hand := func(c *valueChunk) bool {
			return emit(func() (*valueChunk, error) { return c, nil })
		}
		c := s.chunk()
		err := snap.Rows(table, bucket, func(_, value []byte) error {
			c.data = append(c.data, value...)
			c.ends = append(c.ends, len(c.data))
			if len(c.ends) < chunkValues {
				return nil
			}
			if !hand(c) {
				return errStopScan
			}
			c = s.chunk()
			return nil
		})
		if err == nil && len(c.ends) > 0 {
			hand(c)
		}
		if err == errStopScan {
			return nil
		}
		return err
	})
	return s
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

// next returns the next chunk, or nil at the end; the chunk stays valid
// until the next call, which takes prev back to fill again.
func (s *valueStream) next(prev *valueChunk) (*valueChunk, error) {
	if prev != nil {
		select {
		case s.free <- prev:
		default:
		}
	}
	c, err := s.chunks.Next()
	if err == io.EOF {
		return nil, nil
	}
	return c, err
}

// close stops the iteration.
func (s *valueStream) close() { s.chunks.Close() }
