package client

import (
	"context"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// BenchmarkZstdBatches reads a stream of ZSTD batches through batchMessages
// and arrow-go's reader, as a TicketStream does: receiving, decompressing the next
// batches and reading the last one overlap.

// collected keeps a copy of what a RecordWriter sends (it reuses its
// message).
type collected struct{ fds []*flight.FlightData }

func (c *collected) Send(fd *flight.FlightData) error {
	c.fds = append(c.fds, &flight.FlightData{
		DataHeader:  append([]byte(nil), fd.DataHeader...),
		DataBody:    append([]byte(nil), fd.DataBody...),
		AppMetadata: append([]byte(nil), fd.AppMetadata...),
	})
	return nil
}

// replay is a DoGet stream handing out the collected messages, each a fresh
// copy (decompressing replaces a message's header).
type replay struct {
	grpc.ClientStream
	fds []*flight.FlightData
}

func (r *replay) Recv() (*flight.FlightData, error) {
	if len(r.fds) == 0 {
		return nil, io.EOF
	}
	fd := r.fds[0]
	r.fds = r.fds[1:]
	return &flight.FlightData{DataHeader: fd.DataHeader, DataBody: fd.DataBody, AppMetadata: fd.AppMetadata}, nil
}

func (r *replay) Context() context.Context { return context.Background() }

func BenchmarkZstdBatches(b *testing.B) {
	const batches, rows = 64, 16384
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
	}, nil)
	var sent collected
	w := flight.NewRecordWriter(&sent, ipc.WithSchema(schema), ipc.WithZstd())
	bld := array.NewRecordBuilder(memtest.Allocator(b), schema)
	for i := range batches * rows {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		bld.Field(1).(*array.StringBuilder).Append("name-" + string(rune('a'+i%26)))
		if (i+1)%rows == 0 {
			rec := bld.NewRecordBatch()
			if err := w.Write(rec); err != nil {
				b.Fatal(err)
			}
			rec.Release()
		}
	}
	bld.Release()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		msgs := newBatchMessages(&replay{fds: sent.fds})
		rdr, err := ipc.NewReaderFromMessageReader(msgs)
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for rdr.Next() {
			n += rdr.RecordBatch().NumRows()
		}
		if err := rdr.Err(); err != nil {
			b.Fatal(err)
		}
		rdr.Release()
		msgs.close()
		if n != batches*rows {
			b.Fatalf("read %d rows, want %d", n, batches*rows)
		}
	}
	b.ReportMetric(float64(batches*rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
