package engine

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// heldMemory is a ReadMemory that counts what a read holds.
type heldMemory struct {
	mu       sync.Mutex
	held     int64
	acquired int
	fail     error // Acquire's error, if set
}

func (m *heldMemory) Acquire(_ context.Context, n int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return 0, m.fail
	}
	m.held += n
	m.acquired++
	return n, nil
}

func (m *heldMemory) Release(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held -= n
}

func (m *heldMemory) now() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held
}

// A read holds each log frame against its ReadMemory from before it reads
// the frame until it has sent it, and gives everything back when it ends:
// whole, at a limit, cancelled, or refused memory.
func TestReadHoldsFramesAgainstMemory(t *testing.T) {
	e, mem := openZstdEvents(t, catalog.Column{Name: "id", Type: "BIGINT"})
	const frames, rows = 6, 1000
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	var recs []arrow.RecordBatch
	for f := range frames {
		b := array.NewInt64Builder(mem)
		for i := range rows {
			b.Append(int64(f*rows + i))
		}
		col := b.NewArray()
		b.Release()
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{col}, rows))
		col.Release()
	}
	writeAll(t, e, "events", recs)
	for _, r := range recs {
		r.Release()
	}
	read := func(req protocol.ScanRequest, m *heldMemory, send func() error) error {
		t.Helper()
		req.Table, req.Startup = "events", protocol.Position{Mode: protocol.PositionEarliest}
		plan, err := e.PlanScan(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := e.OpenRead(plan.Tickets[0])
		if err != nil {
			t.Fatal(err)
		}
		rs.HoldMemory(m)
		held := func(EncodedBatch, protocol.BatchMeta) error {
			if m.now() <= 0 {
				t.Errorf("a batch sent while the read holds %d bytes", m.now())
			}
			return send()
		}
		rs.SendEncoded(held)
		return rs.Run(context.Background(), func(arrow.RecordBatch, protocol.BatchMeta) error { return held(EncodedBatch{}, protocol.BatchMeta{}) })
	}
	limit := int64(rows + 10)
	for _, req := range []protocol.ScanRequest{{}, {Compression: "none"}, {Limit: &limit}} {
		m := &heldMemory{}
		if err := read(req, m, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		if m.acquired == 0 || m.now() != 0 {
			t.Fatalf("%+v: %d frames admitted, %d bytes held at the end, want some and 0", req, m.acquired, m.now())
		}
	}
	stop := errors.New("client gone")
	m := &heldMemory{}
	if err := read(protocol.ScanRequest{}, m, func() error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("a read whose send fails: %v", err)
	}
	if m.now() != 0 {
		t.Fatalf("%d bytes held after a read whose send failed", m.now())
	}
	m = &heldMemory{fail: errors.New("no memory")}
	if err := read(protocol.ScanRequest{}, m, func() error { return nil }); !errors.Is(err, m.fail) {
		t.Fatalf("a read refused memory: %v, want its error", err)
	}
	if m.now() != 0 {
		t.Fatalf("%d bytes held after a read refused memory", m.now())
	}
}
