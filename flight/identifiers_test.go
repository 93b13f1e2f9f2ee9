package flight_test

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A writer id is bounded as a producer id is: a 1 MiB one once went into
// the log's frame header, which could not hold it, and sent the table
// through storage-fault recovery, failing the honest writers of the table
// with UNAVAILABLE. Now it is INVALID_ARGUMENT, and they go on.
func TestWriterIDsAreBounded(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, client.TableSpec{Table: "log", Columns: pkSpec("", nil).Columns}, false); err != nil {
		t.Fatal(err)
	}
	cols := []string{"k", "v", "s"}
	for _, id := range []string{strings.Repeat("w", protocol.MaxIDBytes+1), strings.Repeat("w", 1<<20), "w\x00"} {
		rec := pkRows(ts.mem, cols, []any{1, 1.5, "a"})
		err := putOne(t, ts, client.WriteRequest{Table: "log", WriterID: id}, rec)
		rec.Release()
		wantInvalid(t, "a writer id of "+errs.Quote(id), err, "writer_id")
		if n := len(status.Convert(err).Message()); n > 1024 {
			t.Errorf("the refusal echoes the id: %d bytes", n)
		}
		_, err = ts.cl.WriterState(ctx, "log", id)
		wantInvalid(t, "writer-state of "+errs.Quote(id), err, "writer_id")
	}
	writePK(t, ts, client.WriteRequest{Table: "log", WriterID: "honest"}, pkRows(ts.mem, cols, []any{2, 2.5, "b"}))
	if n, err := ts.cl.WriterState(ctx, "log", "honest"); err != nil || n != 1 {
		t.Fatalf("the honest writer after the refusals: next sequence %d, %v; want 1", n, err)
	}
}

// The largest sequence leaves no next one: a batch at 2^63−1 once wrapped
// writer-state's next_sequence to a negative number.
func TestWriterSequenceDoesNotWrap(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	for _, spec := range []client.TableSpec{pkSpec("pk", nil), {Table: "log", Columns: pkSpec("", nil).Columns}} {
		if _, err := ts.cl.CreateTable(ctx, spec, false); err != nil {
			t.Fatal(err)
		}
	}
	cols := []string{"k", "v", "s"}
	for _, table := range []string{"pk", "log"} {
		writePK(t, ts, client.WriteRequest{Table: table, WriterID: "w", FirstSequence: math.MaxInt64 - 1}, pkRows(ts.mem, cols, []any{1, 1.5, "a"}))
		if n, err := ts.cl.WriterState(ctx, table, "w"); err != nil || n != math.MaxInt64 {
			t.Fatalf("%s: next sequence %d, %v; want 2^63-1", table, n, err)
		}
		rec := pkRows(ts.mem, cols, []any{2, 2.5, "b"})
		err := putOne(t, ts, client.WriteRequest{Table: table, WriterID: "w", FirstSequence: math.MaxInt64}, rec)
		rec.Release()
		wantInvalid(t, table+": a batch at sequence 2^63-1", err, "leaves no next sequence", "new writer_id")
		if n, err := ts.cl.WriterState(ctx, table, "w"); err != nil || n != math.MaxInt64 {
			t.Fatalf("%s: next sequence after the refusal %d, %v; want 2^63-1", table, n, err)
		}
	}
}

// A row whose partition value is 1 MiB is refused with a message that
// quotes 64 bytes of it, not a 2 MB message quoting it twice.
func TestLongPartitionValueIsQuotedShort(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, client.TableSpec{Table: "events",
		Columns:       []client.Column{{Name: "id", Type: "BIGINT"}, {Name: "dt", Type: "STRING"}},
		PartitionKeys: []string{"dt"}}, false); err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(ts.mem, arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "dt", Type: arrow.BinaryTypes.String, Nullable: true}}, nil))
	b.Field(0).(*array.Int64Builder).Append(1)
	b.Field(1).(*array.StringBuilder).Append(strings.Repeat("d", 1<<20))
	rec := b.NewRecordBatch()
	b.Release()
	err := putOne(t, ts, client.WriteRequest{Table: "events"}, rec)
	rec.Release()
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a 1 MiB partition value: %v, want INVALID_ARGUMENT", err)
	}
	if n := len(status.Convert(err).Message()); n > 1024 {
		t.Errorf("the refusal echoes the value: %d bytes", n)
	}
}
