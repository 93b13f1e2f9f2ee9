package flight_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
)

// recordingStream remembers the data_header of every FlightData it passes on.
type recordingStream struct {
	flight.FlightService_DoGetClient
	headers [][]byte
}

func (s *recordingStream) Recv() (*flight.FlightData, error) {
	fd, err := s.FlightService_DoGetClient.Recv()
	if err == nil {
		s.headers = append(s.headers, fd.DataHeader)
	}
	return fd, err
}

// A scan asks for the compression of the batches it receives, and plain
// Flight reads each the same, as pyarrow's do_get does: ZSTD batches of a
// ZSTD table go out as the log stores them (the frames written before a
// column was added are decoded and compressed again), the others as asked.
// Asking for nothing sends the stored batches as stored and the decoded
// ones uncompressed; "none" sends every batch uncompressed.
func TestScanCompressionThroughPlainFlight(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil { // ZSTD, the default
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 1000, 2)
	if _, err := ts.cl.AlterTable(ctx, client.AlterRequest{Table: "orders", AddColumns: []client.Column{{Name: "note", Type: "STRING"}}}); err != nil {
		t.Fatal(err)
	}
	writePK(t, ts, client.WriteRequest{Table: "orders"}, withNote(t, ts, 2000, 1000))
	fc := ts.cl.Flight()
	for _, tc := range []struct {
		compression string
		columns     []string
		want        []ipcmsg.Codec // the codecs of the batches, sorted
	}{
		{"zstd", nil, []ipcmsg.Codec{ipcmsg.CodecZstd}},
		{"zstd", []string{"note", "order_id"}, []ipcmsg.Codec{ipcmsg.CodecZstd}},
		{"zstd", []string{"amount", "order_id", "item"}, []ipcmsg.Codec{ipcmsg.CodecZstd}}, // every batch as stored
		{"lz4_frame", nil, []ipcmsg.Codec{ipcmsg.CodecLZ4Frame}},
		{"none", nil, []ipcmsg.Codec{ipcmsg.CodecNone}},
		{"", []string{"amount", "order_id", "item"}, []ipcmsg.Codec{ipcmsg.CodecZstd}},
		{"", nil, []ipcmsg.Codec{ipcmsg.CodecNone, ipcmsg.CodecZstd}}, // the frames before the new column are decoded
	} {
		plan, err := ts.cl.Plan(ctx, client.ScanRequest{Table: "orders", Columns: tc.columns, Compression: tc.compression})
		if err != nil {
			t.Fatal(err)
		}
		stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: plan.Endpoints[0].Ticket})
		if err != nil {
			t.Fatal(err)
		}
		rs := &recordingStream{FlightService_DoGetClient: stream}
		r, err := flight.NewRecordReader(rs)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		notes := 0
		for r.Next() {
			rec := r.RecordBatch()
			if !rec.Schema().Equal(plan.Schema) {
				t.Fatalf("%s %v: batch schema %s, want %s", tc.compression, tc.columns, rec.Schema(), plan.Schema)
			}
			ids = append(ids, column[*array.Int64](rec, "order_id").Int64Values()...)
			if rec.Schema().HasField("note") {
				note := column[*array.String](rec, "note")
				notes += note.Len() - note.NullN()
			}
		}
		if err := r.Err(); err != nil {
			t.Fatalf("%s %v: %v", tc.compression, tc.columns, err)
		}
		r.Release()
		wantNotes := 0
		if tc.columns == nil || slices.Contains(tc.columns, "note") {
			wantNotes = 1000
		}
		if len(ids) != 3000 || !slices.IsSorted(ids) || ids[0] != 0 || ids[2999] != 2999 || notes != wantNotes {
			t.Fatalf("%s %v: %d ids from %d to %d, %d notes; want 0 to 2999 and %d notes", tc.compression, tc.columns, len(ids), ids[0], ids[len(ids)-1], notes, wantNotes)
		}
		// One schema message, then batches, each compressed as asked.
		if len(rs.headers) < 2 {
			t.Fatalf("%s: %d messages", tc.compression, len(rs.headers))
		}
		if _, err := ipcmsg.Parse(rs.headers[0]); err == nil {
			t.Fatalf("%s: the first message is a record batch, not the schema", tc.compression)
		}
		var codecs []ipcmsg.Codec
		for i, h := range rs.headers[1:] {
			rb, err := ipcmsg.Parse(h)
			if err != nil {
				t.Fatalf("%s: message %d: %v", tc.compression, i+1, err)
			}
			if !slices.Contains(codecs, rb.Codec) {
				codecs = append(codecs, rb.Codec)
			}
		}
		slices.Sort(codecs)
		if !slices.Equal(codecs, tc.want) {
			t.Fatalf("%q %v: batches of codecs %v, want %v", tc.compression, tc.columns, codecs, tc.want)
		}
	}
}

// The changelog's system columns go out with a ZSTD table's stored batches,
// made up for each: plain Flight reads the same rows as uncompressed.
func TestChangelogCompressionThroughPlainFlight(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 2, "order_id"), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 500, 4)
	fc := ts.cl.Flight()
	read := func(compression string) []string {
		plan, err := ts.cl.Plan(ctx, client.ScanRequest{Table: "orders$changelog",
			Columns: []string{"_change_type", "_log_offset", "order_id", "_commit_timestamp", "item"}, Compression: compression})
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for _, ep := range plan.Endpoints {
			doGet(t, fc, &flight.Ticket{Ticket: ep.Ticket}, func(rec arrow.RecordBatch, _ []byte) {
				for i := range int(rec.NumRows()) {
					var row []string
					for _, c := range rec.Columns() {
						row = append(row, c.ValueStr(i))
					}
					rows = append(rows, fmt.Sprint(row))
				}
			})
		}
		return rows
	}
	plain := read("none")
	for _, c := range []string{"zstd", ""} {
		got := read(c)
		if len(plain) != 2000 || !slices.Equal(plain, got) {
			t.Fatalf("%d rows uncompressed, %d asking for %q; first %q and %q", len(plain), len(got), c, plain[:1], got[:min(1, len(got))])
		}
	}
}

// An LZ4 table's log holds Arrow's LZ4 frames per buffer: by default its
// batches go out as stored, LZ4-compressed, and plain Flight reads them.
func TestDefaultReadOfAnLZ4TableIsAsStored(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	spec := ordersSpec("orders", 1, "")
	spec.Options["table.log.arrow.compression.type"] = "lz4_frame"
	if _, err := ts.cl.CreateTable(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 500, 2)
	plan, err := ts.cl.Plan(ctx, client.ScanRequest{Table: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := ts.cl.Flight().DoGet(ctx, &flight.Ticket{Ticket: plan.Endpoints[0].Ticket})
	if err != nil {
		t.Fatal(err)
	}
	rs := &recordingStream{FlightService_DoGetClient: stream}
	r, err := flight.NewRecordReader(rs)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	rows := int64(0)
	for r.Next() {
		rows += r.RecordBatch().NumRows()
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != 1000 {
		t.Fatalf("read %d rows, want 1000", rows)
	}
	for i, h := range rs.headers[1:] {
		rb, err := ipcmsg.Parse(h)
		if err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
		if rb.Codec != ipcmsg.CodecLZ4Frame {
			t.Fatalf("message %d has codec %s, want lz4_frame", i+1, rb.Codec)
		}
	}
}

// column returns rec's column name.
func column[A arrow.Array](rec arrow.RecordBatch, name string) A {
	return rec.Column(rec.Schema().FieldIndices(name)[0]).(A)
}
