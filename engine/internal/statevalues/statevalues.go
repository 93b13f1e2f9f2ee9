// Package statevalues reads a bucket's stored values (its primary-key
// state) ahead of their decoding: the snapshot reader's source.
package statevalues

import (
	"context"
	"errors"
	"io"

	"github.com/fluxgate-io/fluxgate/internal/prefetch"
	"github.com/fluxgate-io/fluxgate/kv"
)

// Reading a bucket's state is iterating pebble and decoding rows into Arrow
// columns, of about equal cost. A Stream iterates on a goroutine of its
// own and hands the values over in chunks, so that on two cores the two
// overlap.

// Chunk is a run of stored values copied out of the iterator.
type Chunk struct {
	data []byte
	ends []int // ends[i] is where value i ends in data
}

// Len returns the number of values in the chunk.
func (c *Chunk) Len() int { return len(c.ends) }

// Value returns the chunk's value i.
func (c *Chunk) Value(i int) []byte {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.data[start:c.ends[i]]
}

// ChunkValues is the number of values in a chunk (the last one may hold
// fewer); a few chunks in flight keep both goroutines busy without holding
// much of the bucket in memory.
const (
	ChunkValues    = 2048
	chunksInFlight = 4
)

// Stream is a bucket's values, iterated on a goroutine of its own.
type Stream struct {
	chunks *prefetch.Pipeline[*Chunk]
	free   chan *Chunk // chunks the reader is done with, to fill again
}

// Start starts iterating the bucket's rows of snap.
func Start(ctx context.Context, snap *kv.Snapshot, table int64, bucket int) *Stream {
	s := &Stream{free: make(chan *Chunk, chunksInFlight+1)}
	s.chunks = prefetch.Start(ctx, prefetch.Config[*Chunk]{Ahead: chunksInFlight}, func(ctx context.Context, emit func(prefetch.Work[*Chunk]) bool) error {
		hand := func(c *Chunk) bool {
			return emit(func() (*Chunk, error) { return c, nil })
		}
		c := s.chunk()
		err := snap.Rows(table, bucket, func(_, value []byte) error {
			c.data = append(c.data, value...)
			c.ends = append(c.ends, len(c.data))
			if len(c.ends) < ChunkValues {
				return nil
			}
			if !hand(c) {
				return errStopped
			}
			c = s.chunk()
			return nil
		})
		if err == nil && len(c.ends) > 0 {
			hand(c)
		}
		if err == errStopped {
			return nil
		}
		return err
	})
	return s
}

// chunk returns an empty chunk, reusing one the reader is done with.
func (s *Stream) chunk() *Chunk {
	select {
	case c := <-s.free:
		c.data, c.ends = c.data[:0], c.ends[:0]
		return c
	default:
		return &Chunk{}
	}
}

// Next returns the next chunk, or nil at the end; the chunk stays valid
// until the next call, which takes prev back to fill again.
func (s *Stream) Next(prev *Chunk) (*Chunk, error) {
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

// Close stops the iteration.
func (s *Stream) Close() { s.chunks.Close() }

// errStopped ends the iteration once the reader has closed the stream.
var errStopped = errors.New("values no longer read")
