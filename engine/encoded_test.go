package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A scan that asks for ZSTD sends the frames of a ZSTD table as they are
// stored, without decompressing them, whenever it sends a frame whole,
// with every column in it (the changelog's system columns made up for it)
// and, with a filter, when its statistics prove that every row matches; the
// other frames are decoded (and filtered) and sent as records. Either way
// the batches' offsets follow on from each other.
func TestZstdScanSendsWholeFramesAsStored(t *testing.T) {
	e, mem := openZstdEvents(t, catalog.Column{Name: "id", Type: "BIGINT"}, catalog.Column{Name: "name", Type: "STRING"})
	const rows = 1000
	frame := func(f int, schema *arrow.Schema) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		for i := range rows {
			b.Field(0).(*array.Int64Builder).Append(int64(f*rows + i))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%d", i%10))
			if len(b.Fields()) > 2 {
				b.Field(2).(*array.StringBuilder).Append("note")
			}
		}
		return b.NewRecordBatch()
	}
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}
	var recs []arrow.RecordBatch
	for f := range 3 {
		recs = append(recs, frame(f, arrow.NewSchema(fields, nil)))
	}
	writeAll(t, e, "events", recs)
	// The fourth frame has a column the first three were written without.
	if _, err := e.AlterTable(t.Context(), "events", nil, nil, []catalog.Column{{Name: "note", Type: "STRING"}}); err != nil {
		t.Fatal(err)
	}
	recs = append(recs, frame(3, arrow.NewSchema(append(fields, arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}), nil)))
	writeAll(t, e, "events", recs[3:])
	for _, r := range recs {
		r.Release()
	}

	limit := int64(2500)
	for _, tc := range []struct {
		name string
		req  protocol.ScanRequest
		// how each batch went out: m, a stored message; r, a record
		want string
	}{
		{"all columns", protocol.ScanRequest{Compression: "zstd"}, "rrrm"},
		{"projection", protocol.ScanRequest{Compression: "zstd", Columns: []string{"name", "id"}}, "mmmm"},
		{"limit", protocol.ScanRequest{Compression: "zstd", Columns: []string{"id"}, Limit: &limit}, "mmr"},
		// Statistics prove every row of frames 0, 2 and 3 matches, half of frame 1.
		{"filter", protocol.ScanRequest{Compression: "zstd", Columns: []string{"id"}, Filter: json.RawMessage(`{"or": [{"lt": ["id", 1000]}, {"ge": ["id", 1500]}]}`)}, "mrmm"},
		{"as stored by default", protocol.ScanRequest{Columns: []string{"id"}}, "mmmm"},
		{"uncompressed", protocol.ScanRequest{Compression: "none", Columns: []string{"id"}}, "rrrr"},
		{"changelog", protocol.ScanRequest{Table: "events$changelog", Compression: "zstd", Columns: []string{"id"}}, "mmmm"},
		{"system columns", protocol.ScanRequest{Table: "events$changelog", Compression: "zstd", Columns: []string{protocol.ColLogOffset, "id", protocol.ColChangeType, protocol.ColCommitTimestamp}}, "mmmm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			if req.Table == "" {
				req.Table = "events"
			}
			req.Startup = protocol.Position{Mode: protocol.PositionEarliest}
			plan, err := e.PlanScan(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := e.OpenRead(plan.Tickets[0])
			if err != nil {
				t.Fatal(err)
			}
			var got string
			next := int64(0)
			follow := func(m protocol.BatchMeta, n int64) {
				if m.Start != next || n > m.Next-m.Start || n == 0 {
					t.Fatalf("batch %d: offsets [%d, %d) for %d rows after %d", len(got), m.Start, m.Next, n, next)
				}
				next = m.Next
			}
			rs.SendEncoded(func(msg EncodedBatch, m protocol.BatchMeta) error {
				rb, err := ipcmsg.Parse(msg.Meta)
				if err != nil {
					return err
				}
				if rb.Codec != ipcmsg.CodecZstd || len(rb.Nodes) != len(rs.Schema().Fields()) {
					t.Errorf("message with codec %s and %d columns, want zstd and %d", rb.Codec, len(rb.Nodes), len(rs.Schema().Fields()))
				}
				got += "m"
				follow(m, rb.Length)
				return nil
			})
			if err := rs.Run(context.Background(), func(rec arrow.RecordBatch, m protocol.BatchMeta) error {
				got += "r"
				follow(m, rec.NumRows())
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("batches went out as %q, want %q", got, tc.want)
			}
		})
	}
}
