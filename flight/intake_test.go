package flight_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
	"github.com/fluxgate-io/fluxgate/internal/ipcmsg/ipcmsgtest"
)

// crafted is a hand-built record batch message, as a Flight client could
// send it, that the server must refuse.
type crafted struct {
	name  string
	names string // what the error names: the column, or what is wrong
	batch *flight.FlightData
}

const (
	writeOrders = `{"write":{"table":"orders"}}`
	lookupUIDs  = `{"lookup":{"table":"uid_mapping","insert_if_not_exists":true}}`
	// overTestLimit is over the test server's message limit (8 MiB).
	overTestLimit = 64 << 20
)

// craftedOrders returns the schema message of a batch of the orders table,
// the batch message as it is and compressed (ZSTD, LZ4), and malformed
// variants of it.
func craftedOrders(t testing.TB, mem memory.Allocator) (schema *flight.FlightData, valid []*flight.FlightData, bad []crafted) {
	t.Helper()
	rec := ordersRecord(t, mem)
	schema, good := clientMessages(t, rec)
	_, zgood := clientMessages(t, rec, ipc.WithZstd())
	_, lz4good := clientMessages(t, rec, ipc.WithLZ4())
	// Buffers: order_id validity, values; item validity, offsets, data;
	// amount validity, values. Nodes: order_id, item, amount (3 nulls).
	bad = []crafted{
		{"offsets-not-monotonic", "column 1 (item)", edit(t, good, func(rb *ipcmsg.RecordBatch, body []byte) {
			offsets := body[rb.Buffers[3].Offset:]
			copy(offsets[2*4:3*4], offsets[4*4:5*4]) // the last offset stays in range
		})},
		{"offset-past-data", "column 1 (item)", edit(t, good, func(rb *ipcmsg.RecordBatch, body []byte) {
			offsets := body[rb.Buffers[3].Offset:]
			binary.LittleEndian.PutUint32(offsets[2*4:], 1<<20) // the offsets after it are smaller
		})},
		{"validity-missing", "column 1 (item)", edit(t, good, func(rb *ipcmsg.RecordBatch, _ []byte) { rb.Nodes[1].NullCount = 3 })},
		{"null-count-forged", "column 2 (amount)", edit(t, good, func(rb *ipcmsg.RecordBatch, _ []byte) { rb.Nodes[2].NullCount = 1 })},
		{"values-short", "column 0 (order_id)", edit(t, good, func(rb *ipcmsg.RecordBatch, _ []byte) { rb.Buffers[1].Length = 40 })},
		{"claims-1TiB", "claims 1099511627776 uncompressed bytes", claim(t, zgood, 1, 1<<40)},
		{"claims-over-limit", "once decompressed, over the message limit", claim(t, zgood, 1, overTestLimit)},
		{"zstd-frame-claims-60GiB", "column 1 (item)", compressedBatch(t, good, ipcmsg.CodecZstd, 4, func(data []byte) []byte {
			return ipcmsgtest.ZstdFrameClaiming(60<<30, data)
		})},
	}
	return schema, []*flight.FlightData{good, zgood, lz4good}, bad
}

// ordersRecord is the batch of craftedOrders: ten orders, some amounts
// null. It is released when the test ends.
func ordersRecord(t testing.TB, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, ordersSchema)
	defer b.Release()
	for i := range 10 {
		b.Field(0).(*array.Int64Builder).Append(int64(1000 + i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("item-%d", i))
		if i%4 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Float64Builder).Append(float64(i))
		}
	}
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

// craftedKeys is craftedOrders for a key batch of the uid_mapping table.
func craftedKeys(t testing.TB, mem memory.Allocator) (schema *flight.FlightData, valid []*flight.FlightData, bad []crafted) {
	t.Helper()
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues([]string{"user_a", "user_b", "user_a", "user_c", "user_d"}, nil)
	keys := b.NewArray()
	defer keys.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "uid", Type: arrow.BinaryTypes.String}}, nil), []arrow.Array{keys}, 5)
	defer rec.Release()
	schema, good := clientMessages(t, rec)
	_, zgood := clientMessages(t, rec, ipc.WithZstd())
	_, lz4good := clientMessages(t, rec, ipc.WithLZ4())
	// Buffers: uid validity, offsets, data.
	bad = []crafted{
		{"offsets-not-monotonic", "column 0 (uid)", edit(t, good, func(rb *ipcmsg.RecordBatch, body []byte) {
			offsets := body[rb.Buffers[1].Offset:]
			copy(offsets[1*4:2*4], offsets[3*4:4*4])
		})},
		{"validity-missing", "column 0 (uid)", edit(t, good, func(rb *ipcmsg.RecordBatch, _ []byte) { rb.Nodes[0].NullCount = 2 })},
		{"offsets-short", "string offset buffer", edit(t, good, func(rb *ipcmsg.RecordBatch, _ []byte) { rb.Buffers[1].Length = 8 })},
		{"claims-1TiB", "claims 1099511627776 uncompressed bytes", claim(t, zgood, 2, 1<<40)},
		{"zstd-frame-claims-60GiB", "column 0 (uid)", compressedBatch(t, good, ipcmsg.CodecZstd, 2, func(data []byte) []byte {
			return ipcmsgtest.ZstdFrameClaiming(60<<30, data)
		})},
	}
	return schema, []*flight.FlightData{good, zgood, lz4good}, bad
}

// clientMessages returns rec as a Flight client sends it: the schema
// message, then the batch.
func clientMessages(t testing.TB, rec arrow.RecordBatch, opts ...ipc.Option) (schema, batch *flight.FlightData) {
	t.Helper()
	var sent sentMessages
	w := flight.NewRecordWriter(&sent, append([]ipc.Option{ipc.WithSchema(rec.Schema())}, opts...)...)
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 2 {
		t.Fatalf("%d messages, want schema and batch", len(sent))
	}
	return sent[0], sent[1]
}

type sentMessages []*flight.FlightData

func (s *sentMessages) Send(fd *flight.FlightData) error {
	*s = append(*s, &flight.FlightData{DataHeader: bytes.Clone(fd.DataHeader), DataBody: bytes.Clone(fd.DataBody)})
	return nil
}

// edit returns batch with its metadata and a copy of its body changed by f.
func edit(t testing.TB, batch *flight.FlightData, f func(rb *ipcmsg.RecordBatch, body []byte)) *flight.FlightData {
	t.Helper()
	rb, err := ipcmsg.Parse(batch.DataHeader)
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Clone(batch.DataBody)
	f(rb, body)
	return &flight.FlightData{DataHeader: rb.Marshal(), DataBody: body}
}

// claim returns a compressed batch whose buffer i claims n uncompressed bytes.
func claim(t testing.TB, batch *flight.FlightData, i int, n int64) *flight.FlightData {
	return edit(t, batch, func(rb *ipcmsg.RecordBatch, body []byte) {
		binary.LittleEndian.PutUint64(body[rb.Buffers[i].Offset:], uint64(n))
	})
}

// compressedBatch returns the uncompressed batch good with buffer i
// compressed with codec as frame makes it of its bytes, the other buffers
// stored as they are.
func compressedBatch(t testing.TB, good *flight.FlightData, codec ipcmsg.Codec, i int, frame func(data []byte) []byte) *flight.FlightData {
	t.Helper()
	rb, err := ipcmsg.Parse(good.DataHeader)
	if err != nil {
		t.Fatal(err)
	}
	packed := make([][]byte, len(rb.Buffers))
	b := rb.Buffers[i]
	packed[i] = frame(good.DataBody[b.Offset : b.Offset+b.Length])
	layout, pieces := rb.Compress(good.DataBody, codec, packed)
	return &flight.FlightData{DataHeader: layout.Marshal(), DataBody: bytes.Join(pieces, nil)}
}

// rawClient is a plain Flight client of ts, which sends what it is given.
func rawClient(t testing.TB, ts *testServer) flight.Client {
	t.Helper()
	cl, err := flight.NewClientWithMiddleware(ts.addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// putRaw sends DoPut with descriptor command cmd on schema and batches, and
// returns the error that ended the call, nil if every batch was
// acknowledged.
func putRaw(ctx context.Context, cl flight.Client, cmd string, schema *flight.FlightData, batches ...*flight.FlightData) error {
	stream, err := cl.DoPut(ctx)
	if err != nil {
		return err
	}
	return roundTrip[*flight.PutResult](stream, cmd, schema, batches)
}

// exchangeRaw is putRaw for DoExchange.
func exchangeRaw(ctx context.Context, cl flight.Client, cmd string, schema *flight.FlightData, batches ...*flight.FlightData) error {
	stream, err := cl.DoExchange(ctx)
	if err != nil {
		return err
	}
	return roundTrip[*flight.FlightData](stream, cmd, schema, batches)
}

// rawStream is a DoPut or DoExchange client stream, whose answers are R.
type rawStream[R any] interface {
	Send(*flight.FlightData) error
	CloseSend() error
	Recv() (R, error)
}

// roundTrip sends the descriptor with the schema, then the batches, and reads
// answers until the server ends the call: nil when it ends cleanly.
func roundTrip[R any](stream rawStream[R], cmd string, schema *flight.FlightData, batches []*flight.FlightData) error {
	first := &flight.FlightData{DataHeader: schema.DataHeader, FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(cmd)}}
	for _, m := range append([]*flight.FlightData{first}, batches...) {
		if stream.Send(m) != nil {
			break
		}
	}
	stream.CloseSend()
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// Each malformed batch is INVALID_ARGUMENT naming its column, nothing of it
// is stored, and the bucket stays readable and writable.
func TestMalformedBatchesAreRefused(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, ordersSpec("orders", 1, ""), false); err != nil {
		t.Fatal(err)
	}
	cl := rawClient(t, ts)
	schema, valid, bad := craftedOrders(t, ts.mem)
	if err := putRaw(ctx, cl, writeOrders, schema, valid...); err != nil {
		t.Fatalf("the valid batches: %v", err)
	}
	rows := 10 * len(valid)
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			err := putRaw(ctx, cl, writeOrders, schema, c.batch)
			wantInvalid(t, "DoPut", err, c.names)
			if got := ids(t, ts, client.ScanRequest{Table: "orders"}); len(got) != rows {
				t.Fatalf("read %d rows after the refused batch, want the %d before it", len(got), rows)
			}
		})
	}
	if err := putRaw(ctx, cl, writeOrders, schema, valid...); err != nil {
		t.Fatalf("the valid batches after the malformed ones: %v", err)
	}
	if got := ids(t, ts, client.ScanRequest{Table: "orders"}); len(got) != 2*rows {
		t.Fatalf("read %d rows, want %d", len(got), 2*rows)
	}
}

// The same through DoExchange, which a caller with only read permission may
// call: each malformed key batch is INVALID_ARGUMENT, and lookups go on.
func TestMalformedLookupBatchesAreRefused(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	createUIDMapping(t, ts)
	cl := rawClient(t, ts)
	schema, valid, bad := craftedKeys(t, ts.mem)
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			wantInvalid(t, "DoExchange", exchangeRaw(ctx, cl, lookupUIDs, schema, c.batch), c.names)
		})
	}
	if err := exchangeRaw(ctx, cl, lookupUIDs, schema, valid...); err != nil {
		t.Fatalf("the valid key batches after the malformed ones: %v", err)
	}
	assertLookupServes(t, ts)
}

func createUIDMapping(t testing.TB, ts *testServer) {
	t.Helper()
	spec := client.TableSpec{
		Table:      "uid_mapping",
		Columns:    []client.Column{{Name: "uid", Type: "STRING"}, {Name: "uid_int", Type: "INT"}},
		PrimaryKey: []string{"uid"},
		Options:    map[string]string{"auto-increment.fields": "uid_int", "bucket.num": "2"},
	}
	if _, err := ts.cl.CreateTable(context.Background(), spec, false); err != nil {
		t.Fatal(err)
	}
}

// assertLookupServes looks up a key with the Go client.
func assertLookupServes(t *testing.T, ts *testServer) {
	t.Helper()
	l, err := ts.cl.Lookup(ctxT(t), client.LookupRequest{Table: "uid_mapping", InsertIfNotExists: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	keys := stringKeys(ts, "uid", "user_a")
	defer keys.Release()
	ans, _, err := l.Lookup(keys)
	if err != nil {
		t.Fatalf("lookup after the malformed batches: %v", err)
	}
	defer ans.Release()
	if ans.NumRows() != 1 {
		t.Fatalf("lookup of user_a answered %d rows, want 1", ans.NumRows())
	}
}

// pyarrow's do_exchange sends the descriptor in a message of its own before
// the schema: the intake takes the first message with a header as the schema,
// wherever it comes.
func TestExchangeDescriptorBeforeSchema(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	createUIDMapping(t, ts)
	schema, valid, _ := craftedKeys(t, ts.mem)
	stream, err := rawClient(t, ts).DoExchange(ctx)
	if err != nil {
		t.Fatal(err)
	}
	msgs := append([]*flight.FlightData{
		{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(lookupUIDs)}},
		{DataHeader: schema.DataHeader},
	}, valid...)
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	answers := 0
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("a descriptor before the schema: %v", err)
		}
		if len(msg.DataBody) > 0 {
			answers++
		}
	}
	if answers != len(valid) {
		t.Fatalf("%d answered batches, want %d", answers, len(valid))
	}
}
