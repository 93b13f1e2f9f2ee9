package benchdata

import (
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// BaselineFlight is the Flight service the benchmarks measure fluxgate
// against: DoPut acknowledges every batch as fluxgate does (PROTOCOL.md §5)
// and keeps nothing, the no-op append; DoGet sends Recs, held in memory,
// whatever the ticket, the scan baseline.
type BaselineFlight struct {
	flight.BaseFlightServer
	Recs []arrow.RecordBatch
}

func (s *BaselineFlight) DoPut(stream flight.FlightService_DoPutServer) error {
	r, err := flight.NewRecordReader(stream)
	if err != nil {
		return err
	}
	defer r.Release()
	seq := 0
	for r.Next() {
		md, _ := json.Marshal(map[string]any{"sequence": seq, "rows": r.RecordBatch().NumRows(), "buckets": map[string]int{}})
		seq++
		if err := stream.Send(&flight.PutResult{AppMetadata: md}); err != nil {
			return err
		}
	}
	return r.Err()
}

func (s *BaselineFlight) DoGet(_ *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	w := flight.NewRecordWriter(stream, ipc.WithSchema(s.Recs[0].Schema()))
	defer w.Close()
	for _, r := range s.Recs {
		if err := w.WriteWithAppMetadata(r, []byte(`{}`)); err != nil {
			return err
		}
	}
	return nil
}
