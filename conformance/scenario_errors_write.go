package conformance

// err-bad-batch, err-message-too-large and err-write-to-view: writes that
// PROTOCOL.md §1 and §5 reject, leaving nothing of the rejected batch and
// everything acknowledged before it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/util"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
)

func errBadBatch(ctx context.Context, env *Env) error {
	table := env.Table("badbatch")
	if _, err := createTable(ctx, env, simpleSpec(table, 2, true)); err != nil {
		return err
	}
	if _, err := writeIDs(ctx, env, client.WriteRequest{Table: table}, idRange(0, 10)); err != nil {
		return err
	}
	id64 := arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64}
	name := arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}
	score := arrow.Field{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	cases := []struct {
		what    string
		fields  []arrow.Field
		rows    string
		culprit string
	}{
		{"a missing NOT NULL column", []arrow.Field{name, score},
			`[{"name": "a", "score": 1}, {"name": "b", "score": 2}]`, "id"},
		{"an extra column", []arrow.Field{id64, name, score, {Name: "bogus", Type: arrow.PrimitiveTypes.Int32, Nullable: true}},
			`[{"id": 100, "name": "a", "score": 1, "bogus": 7}]`, "bogus"},
		{"a mistyped column (score as STRING)", []arrow.Field{id64, name, {Name: "score", Type: arrow.BinaryTypes.String, Nullable: true}},
			`[{"id": 100, "name": "a", "score": "1.5"}]`, "score"},
		{"a mistyped column (id as INT)", []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}, name, score},
			`[{"id": 100, "name": "a", "score": 1.5}]`, "id"},
	}
	for _, tc := range cases {
		rec, err := recordFromJSON(env, tc.fields, tc.rows)
		if err != nil {
			return err
		}
		_, err = writeRecords(ctx, env, client.WriteRequest{Table: table}, rec)
		rec.Release()
		if err := wantCode("write of a batch with "+tc.what, err, codes.InvalidArgument, tc.culprit); err != nil {
			return err
		}
	}
	if err := holdsIDs(ctx, env, table, idRange(0, 10), "after the rejected batches"); err != nil {
		return err
	}

	// In one stream: a good batch, then one with a null id (NOT NULL), whose
	// other rows must not be applied either.
	good := simpleBatch(env.Mem, idRange(10, 10))
	defer good.Release()
	bad, err := recordFromJSON(env, []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, name, score},
		`[{"id": 20, "name": "x", "score": 1}, {"id": null, "name": "y", "score": 2}, {"id": 22, "name": "z", "score": 3}]`)
	if err != nil {
		return err
	}
	defer bad.Release()
	// One stream has one schema: the good batch takes the bad one's flags.
	goodView := withSchema(good, bad.Schema())
	defer goodView.Release()
	res, err := writeRecords(ctx, env, client.WriteRequest{Table: table}, goodView, bad)
	if len(res) != 1 {
		return fmt.Errorf("stream of a good batch then a batch with a null id: %d batches acknowledged, want 1 (err %v)", len(res), err)
	}
	if err := wantCode("write of a batch with a null in NOT NULL column id", err, codes.InvalidArgument, "id"); err != nil {
		return err
	}
	return holdsIDs(ctx, env, table, idRange(0, 20), "after the batch with a null id")
}

func errMessageTooLarge(ctx context.Context, env *Env) error {
	table := env.Table("toolarge")
	spec := client.TableSpec{Table: table, Columns: []client.Column{{Name: "id", Type: "BIGINT", Nullable: new(false)}, {Name: "payload", Type: "BYTES"}}}
	if _, err := createTable(ctx, env, spec); err != nil {
		return err
	}
	limit := env.MaxMessageBytes
	rec := payloadBatch(env, limit/(1<<20)+2, 1<<20)
	defer rec.Release()
	// The raw Flight stream sends the batch whole (the client's Writer would
	// split it), and its own limit is raised so that the server is the one
	// to refuse.
	desc := &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: strings.SplitN(table, ".", 2)}
	_, err := rawPut(ctx, env, desc, rec, grpc.MaxCallSendMsgSize(2*limit+(16<<20)))
	what := fmt.Sprintf("DoPut of a %d MiB batch to a server with --max-message-bytes %d", util.TotalRecordSize(rec)>>20, limit)
	if err := wantCode(what, err, codes.ResourceExhausted, strconv.Itoa(limit)); err != nil {
		return err
	}
	offsets, err := env.Client.ListOffsets(ctx, table, client.Latest, nil)
	if err != nil {
		return err
	}
	if err := equalOffsets("list-offsets after the refused batch", offsets, map[int]int64{0: 0}); err != nil {
		return err
	}
	// The server goes on serving.
	small := payloadBatch(env, 2, 10)
	defer small.Release()
	if _, err := writeRecords(ctx, env, client.WriteRequest{Table: table}, small); err != nil {
		return fmt.Errorf("write of a small batch after the refused one: %w", err)
	}
	return nil
}

func errWriteToView(ctx context.Context, env *Env) error {
	table := env.Table("view")
	if _, err := createTable(ctx, env, simpleSpec(table, 1, false)); err != nil {
		return err
	}
	if _, err := writeIDs(ctx, env, client.WriteRequest{Table: table}, idRange(0, 5)); err != nil {
		return err
	}
	view := table + "$changelog"
	for _, req := range []client.WriteRequest{{Table: view}, {Table: view, Mode: client.ModeAppend}} {
		_, err := writeIDs(ctx, env, req, idRange(100, 3))
		what := fmt.Sprintf("write to %s (mode %q)", view, req.Mode)
		if err := wantCode(what, err, codes.FailedPrecondition, view); err != nil {
			return err
		}
	}
	return holdsIDs(ctx, env, table, idRange(0, 5), "after the writes to its view")
}

// holdsIDs checks that the simple table holds exactly ids.
func holdsIDs(ctx context.Context, env *Env, table string, ids []int64, when string) error {
	got, err := scanIDs(ctx, env, client.ScanRequest{Table: table})
	if err != nil {
		return fmt.Errorf("read %s: %w", when, err)
	}
	return equalInts("the table "+when, allIDs(got), ids)
}

func recordFromJSON(env *Env, fields []arrow.Field, rows string) (arrow.RecordBatch, error) {
	rec, _, err := array.RecordFromJSON(env.Mem, arrow.NewSchema(fields, nil), strings.NewReader(rows))
	if err != nil {
		return nil, fmt.Errorf("build record %s: %w", rows, err)
	}
	return rec, nil
}

// withSchema returns rec's columns under schema (same types, other
// nullability flags), so that batches can share one stream. The caller
// releases the result.
func withSchema(rec arrow.RecordBatch, schema *arrow.Schema) arrow.RecordBatch {
	return array.NewRecordBatch(schema, rec.Columns(), rec.NumRows())
}

// payloadBatch has n rows whose BYTES payload is size bytes each.
func payloadBatch(env *Env, n, size int) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "payload", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(env.Mem, schema)
	defer b.Release()
	value := bytes.Repeat([]byte{0xa5}, size)
	pb := b.Field(1).(*array.BinaryBuilder)
	pb.ReserveData(n * size)
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		pb.Append(value)
	}
	return b.NewRecordBatch()
}

// rawPut writes recs through a DoPut of the raw Flight client whose first
// message carries desc, and returns how many PutResults came and the
// stream's final error.
func rawPut(ctx context.Context, env *Env, desc *flight.FlightDescriptor, rec arrow.RecordBatch, opts ...grpc.CallOption) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := env.Client.Flight().DoPut(ctx, opts...)
	if err != nil {
		return 0, err
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(env.Mem))
	w.SetFlightDescriptor(desc)
	// A write error is io.EOF when the server ended the stream; its status
	// comes from Recv.
	werr := w.Write(rec)
	w.Close()
	stream.CloseSend()
	acks := 0
	for {
		_, err := stream.Recv()
		switch {
		case errors.Is(err, io.EOF):
			if werr != nil && !errors.Is(werr, io.EOF) {
				return acks, werr
			}
			return acks, nil
		case err != nil:
			return acks, err
		}
		acks++
	}
}
