package flight

// Lookup answers (PROTOCOL.md §6): the answer to one key batch, or to an
// inline lookup, goes in as many messages as keep each under the 4 MiB a
// gRPC client accepts by default, as scans' batches do. Every message
// carries the answer's app_metadata; all but the last say "more": true, and
// the client joins them.

import (
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"

	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// sendLookupAnswer sends ans with meta through w in slices of at most
// engine.MaxBatchBytes of IPC body each (a single row larger than that goes
// alone).
func (s *Service) sendLookupAnswer(w *flight.Writer, ans arrow.RecordBatch, meta protocol.LookupMeta) error {
	slices, err := answerSlices(ans, engine.MaxBatchBytes, s.mem)
	if err != nil {
		return err
	}
	defer func() {
		for _, sl := range slices {
			sl.Release()
		}
	}()
	for i, sl := range slices {
		meta.More = i < len(slices)-1
		md, err := json.Marshal(meta)
		if err != nil {
			return err
		}
		if err := w.WriteWithAppMetadata(sl, md); err != nil {
			return err
		}
	}
	return nil
}

// answerSlices cuts rec into consecutive slices whose IPC bodies are at most
// limit bytes (and their padding, a few bytes a buffer): an answer whose
// buffers fit goes whole, a larger one is cut by the average row's size,
// then any slice that its rows' sizes put over is halved until it fits. The
// caller releases them.
func answerSlices(rec arrow.RecordBatch, limit int64, mem memory.Allocator) ([]arrow.RecordBatch, error) {
	rows := rec.NumRows()
	size := util.TotalRecordSize(rec)
	if size <= limit || rows <= 1 {
		rec.Retain()
		return []arrow.RecordBatch{rec}, nil
	}
	step := max(rows*limit/size, 1)
	var out []arrow.RecordBatch
	var cut func(i, j int64) error
	cut = func(i, j int64) error {
		sl := rec.NewSlice(i, j)
		if j-i > 1 {
			n, err := bodyBytes(sl, mem)
			if err == nil && n > limit {
				sl.Release()
				mid := i + (j-i)/2
				if err := cut(i, mid); err != nil {
					return err
				}
				return cut(mid, j)
			}
			if err != nil {
				sl.Release()
				return err
			}
		}
		out = append(out, sl)
		return nil
	}
	for i := int64(0); i < rows; i += step {
		if err := cut(i, min(i+step, rows)); err != nil {
			for _, sl := range out {
				sl.Release()
			}
			return nil, err
		}
	}
	return out, nil
}

// bodyBytes is the size of rec's IPC body as the writer sends it.
func bodyBytes(rec arrow.RecordBatch, mem memory.Allocator) (int64, error) {
	p, err := ipc.GetRecordBatchPayload(rec, ipc.WithAllocator(mem))
	if err != nil {
		return 0, err
	}
	defer p.Release()
	var n countingWriter
	if err := p.SerializeBody(&n); err != nil {
		return 0, err
	}
	return int64(n), nil
}

// countingWriter counts the bytes written to it.
type countingWriter int64

func (c *countingWriter) Write(b []byte) (int, error) {
	*c += countingWriter(len(b))
	return len(b), nil
}
