package flight

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/fluxgate-io/fluxgate/internal/testwait"
)

// Many streams each sending one large batch (the 40 connections with
// 60 MB each, scaled down): while no batch is acknowledged, the streams that
// have received theirs hold at most the memory budget's share for received
// batches, and the others wait before receiving.
func TestWriteBudgetHoldsFromReceipt(t *testing.T) {
	const (
		streams = 40
		budget  = 16 << 20
		limit   = 1 << 20
		rows    = 110_000 // 880 KB of int64s
	)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := New(nil, Options{Allocator: mem, Limits: Limits{WriteBytes: budget, MessageBytes: limit, IdleTimeout: -1}})
	msgs := messagesOf(t, int64s(mem, rows))
	// A stream reserves receiveFactor × limit before it receives, and keeps
	// its batch's size: the last batch received is the one after which no
	// reservation fits.
	size, share := int64(proto.Size(msgs[1])), s.limits.bytes.total
	want := int((share-receiveFactor*limit)/size) + 1

	var unacked, peak atomic.Int64 // batches received and not acknowledged
	ack := make(chan struct{})
	errc := make(chan error, streams)
	var wg sync.WaitGroup
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &fakeStream{ctx: t.Context(), msgs: msgs, onLast: func() {
				n := unacked.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
			}}
			in, err := s.openIntake("DoPut", st, s.limits.bytes)
			if err != nil {
				errc <- err
				return
			}
			defer in.Release()
			if !in.Next() {
				errc <- in.Err()
				return
			}
			size := in.Take()
			<-ack
			unacked.Add(-1)
			s.limits.bytes.release(size)
		}()
	}

	// Once want batches are held, the budget has no room for another
	// message, and nothing more is received until something is acknowledged.
	testwait.For(t, "the budget holds the batches", func() bool {
		select {
		case err := <-errc:
			t.Fatal(err)
		default:
		}
		return unacked.Load() >= int64(want)
	})
	if got := unacked.Load(); got != int64(want) {
		t.Fatalf("%d batches of %d bytes received unacknowledged under a %d-byte share of the budget, want %d", got, size, share, want)
	}
	if free := share - s.limits.bytes.inUse(); free >= receiveFactor*limit {
		t.Fatalf("%d bytes of the budget free with %d batches held: room for another", free, want)
	}
	close(ack)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if p := peak.Load(); p != int64(want) {
		t.Errorf("at most %d batches were held unacknowledged, want %d", p, want)
	}
	if used := s.limits.bytes.inUse(); used != 0 {
		t.Errorf("%d bytes of the budget are held at the end", used)
	}
}

// int64s is a batch of one int64 column of n rows.
func int64s(mem memory.Allocator, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil))
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
	}
	return b.NewRecordBatch()
}

// messagesOf returns rec as a Flight client sends it: its schema (with a
// write descriptor), then the batch. It releases rec.
func messagesOf(t *testing.T, rec arrow.RecordBatch) []*flight.FlightData {
	t.Helper()
	defer rec.Release()
	var sent sentData
	w := flight.NewRecordWriter(&sent, ipc.WithSchema(rec.Schema()))
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"write":{"table":"t"}}`)})
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return sent
}

type sentData []*flight.FlightData

func (s *sentData) Send(fd *flight.FlightData) error {
	// The writer reuses fd and its buffers.
	*s = append(*s, &flight.FlightData{FlightDescriptor: fd.FlightDescriptor,
		DataHeader: bytes.Clone(fd.DataHeader), DataBody: bytes.Clone(fd.DataBody)})
	return nil
}

// fakeStream is a client's side of a stream that sends msgs, calling onLast
// as it hands out the last, then ends.
type fakeStream struct {
	ctx    context.Context
	msgs   []*flight.FlightData
	next   int
	onLast func()
}

func (f *fakeStream) Context() context.Context { return f.ctx }

func (f *fakeStream) Recv() (*flight.FlightData, error) {
	if f.next == len(f.msgs) {
		return nil, io.EOF
	}
	f.next++
	if f.next == len(f.msgs) {
		f.onLast()
	}
	return f.msgs[f.next-1], nil
}
