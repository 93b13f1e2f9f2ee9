package flight_test

// Benchmarks of the Flight service, each beside its baseline in the same run
// (docs/benchmarks.md):
//
//	BenchmarkAppend/noop      DoPut of the batches to a server that only acknowledges them
//	BenchmarkAppend/pwrite    the batches' bytes written to a file and fsynced, no network: the disk's part
//	BenchmarkAppend/fluxgate  the same batches appended to a log table (fsynced)
//	BenchmarkScan/memory      DoGet of the same batches held in memory
//	BenchmarkScan/fluxgate    a full scan of the table
//	BenchmarkProjection/all   all 20 columns
//	BenchmarkProjection/2of20 two of them
//	BenchmarkPrimaryKeyScan/log       a full scan of a log table
//	BenchmarkPrimaryKeyScan/pk        a plain-name read of a primary-key table holding the same rows
//	BenchmarkPrimaryKeyScan/pk-count  its COUNT(*) from the kept row count (table-stats), against pk
//	BenchmarkUnionRead/log    a full scan of a table all in the log
//	BenchmarkUnionRead/union  the same rows, the first half in the lake (a union read)
//	BenchmarkUnionRead/lake   t$lake of the first half alone
//	BenchmarkLakeLag          the largest lake lag under a steady write load, against the freshness

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/fluxgate-io/fluxgate/bench/benchdata"
	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	fgflight "github.com/fluxgate-io/fluxgate/flight"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

const (
	benchRows    = 16 << 10 // rows per batch: 20 columns × 8 B × 16K ≈ 2.6 MB
	benchBatches = 16
	benchCols    = 20
)

func benchSchema() *arrow.Schema {
	fields := make([]arrow.Field, benchCols)
	for i := range fields {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%02d", i), Type: arrow.PrimitiveTypes.Int64, Nullable: true}
		if i%2 == 1 {
			fields[i].Type = arrow.PrimitiveTypes.Float64
		}
	}
	return arrow.NewSchema(fields, nil)
}

func benchSpec(table, compression string) client.TableSpec {
	spec := client.TableSpec{Table: table, Options: map[string]string{"table.log.arrow.compression.type": compression}}
	for _, f := range benchSchema().Fields() {
		typ := "BIGINT"
		if f.Type.ID() == arrow.FLOAT64 {
			typ = "DOUBLE"
		}
		spec.Columns = append(spec.Columns, client.Column{Name: f.Name, Type: typ})
	}
	return spec
}

// benchBatchesData builds the batches: a time-like ascending first column and
// random-looking others.
func benchBatchesData(mem memory.Allocator) []arrow.RecordBatch {
	schema := benchSchema()
	var recs []arrow.RecordBatch
	x := uint64(42)
	for b := range benchBatches {
		rb := array.NewRecordBuilder(mem, schema)
		for r := range benchRows {
			for c := range benchCols {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				switch fb := rb.Field(c).(type) {
				case *array.Int64Builder:
					if c == 0 {
						fb.Append(int64(b*benchRows + r))
					} else {
						fb.Append(int64(x % 1000000))
					}
				case *array.Float64Builder:
					fb.Append(float64(x%100000) / 100)
				}
			}
		}
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	return recs
}

func batchesBytes(recs []arrow.RecordBatch) int64 {
	var n int64
	for _, r := range recs {
		n += r.NumRows() * benchCols * 8
	}
	return n
}

// serve runs svc on a gRPC server with opts besides the sizes both sides
// share.
func serve(b *testing.B, svc flight.FlightServer, opts ...grpc.ServerOption) string {
	srv := flight.NewServerWithMiddleware(nil, append([]grpc.ServerOption{grpc.MaxRecvMsgSize(64 << 20),
		grpc.InitialWindowSize(16 << 20), grpc.InitialConnWindowSize(16 << 20)}, opts...)...)
	srv.RegisterFlightService(svc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv.InitListener(ln)
	go srv.Serve()
	b.Cleanup(srv.Shutdown)
	return ln.Addr().String()
}

func dial(b *testing.B, addr string) *client.Client {
	cl, err := client.Dial(context.Background(), addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cl.Close() })
	return cl
}

func startBench(b *testing.B) (*client.Client, *engine.Engine) {
	eng, err := engine.Open(b.Context(), b.TempDir(), engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close() })
	return dial(b, serve(b, fgflight.New(eng, fgflight.Options{}), fgflight.ServerOptions(fgflight.Options{})...)), eng
}

func appendAll(b *testing.B, cl *client.Client, table string, recs []arrow.RecordBatch) {
	w, err := cl.NewWriter(context.Background(), client.WriteRequest{Table: table})
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Send(r); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

func scanAll(b *testing.B, cl *client.Client, req client.ScanRequest, wantRows int64) {
	sc, err := cl.Scan(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	defer sc.Release()
	var n int64
	for sc.Next() {
		n += sc.RecordBatch().NumRows()
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	if n != wantRows {
		b.Fatalf("scanned %d rows, want %d", n, wantRows)
	}
}

func BenchmarkAppend(b *testing.B) {
	recs := benchBatchesData(memtest.Allocator(b))
	b.Run("noop", func(b *testing.B) {
		cl := dial(b, serve(b, &benchdata.BaselineFlight{}))
		b.SetBytes(batchesBytes(recs))
		for b.Loop() {
			appendAll(b, cl, "fluss.t", recs)
		}
	})
	b.Run("pwrite", func(b *testing.B) {
		var payload [][]byte
		for _, r := range recs {
			var buf bytes.Buffer
			w := ipc.NewWriter(&buf, ipc.WithSchema(r.Schema()))
			if err := w.Write(r); err != nil {
				b.Fatal(err)
			}
			w.Close()
			payload = append(payload, buf.Bytes())
		}
		f, err := os.Create(filepath.Join(b.TempDir(), "log"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		var pos int64
		b.SetBytes(batchesBytes(recs))
		for b.Loop() {
			for i, p := range payload {
				if _, err := f.WriteAt(p, pos); err != nil {
					b.Fatal(err)
				}
				pos += int64(len(p))
				if i%8 == 7 {
					if err := f.Sync(); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	})
	for _, codec := range []string{"none", "lz4_frame", "zstd"} {
		b.Run("fluxgate-"+codec, func(b *testing.B) {
			cl, _ := startBench(b)
			if _, err := cl.CreateTable(context.Background(), benchSpec("fluss.t", codec), false); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(batchesBytes(recs))
			for b.Loop() {
				appendAll(b, cl, "fluss.t", recs)
			}
		})
	}
}

func BenchmarkScan(b *testing.B) {
	recs := benchBatchesData(memtest.Allocator(b))
	rows := int64(benchRows * benchBatches)
	b.Run("memory", func(b *testing.B) {
		cl := dial(b, serve(b, &benchdata.BaselineFlight{Recs: recs}))
		b.SetBytes(batchesBytes(recs))
		for b.Loop() {
			st, err := cl.ReadTicket(context.Background(), []byte("t"))
			if err != nil {
				b.Fatal(err)
			}
			var n int64
			for st.Next() {
				n += st.RecordBatch().NumRows()
			}
			st.Release()
			if n != rows {
				b.Fatalf("read %d rows", n)
			}
		}
	})
	// fluxgate-zstd-as-stored asks for ZSTD batches: they go out as stored.
	for _, tc := range []struct{ name, codec, wire string }{
		{"fluxgate-none", "none", ""}, {"fluxgate-lz4_frame", "lz4_frame", ""},
		{"fluxgate-zstd", "zstd", ""}, {"fluxgate-zstd-as-stored", "zstd", "zstd"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cl, _ := startBench(b)
			if _, err := cl.CreateTable(context.Background(), benchSpec("fluss.t", tc.codec), false); err != nil {
				b.Fatal(err)
			}
			appendAll(b, cl, "fluss.t", recs)
			b.SetBytes(batchesBytes(recs))
			for b.Loop() {
				scanAll(b, cl, client.ScanRequest{Table: "fluss.t", Compression: tc.wire}, rows)
			}
		})
	}
}

func BenchmarkUnionRead(b *testing.B) {
	recs := benchBatchesData(memtest.Allocator(b))
	rows := int64(benchRows * benchBatches)
	cl, _ := startBench(b)
	ctx := context.Background()
	for _, name := range []string{"fluss.log", "fluss.lake"} {
		spec := benchSpec(name, "none")
		if name == "fluss.lake" {
			spec.Options["table.datalake.enabled"] = "true"
		}
		if _, err := cl.CreateTable(ctx, spec, false); err != nil {
			b.Fatal(err)
		}
	}
	appendAll(b, cl, "fluss.log", recs)
	appendAll(b, cl, "fluss.lake", recs[:len(recs)/2])
	if _, err := cl.TierNow(ctx, "fluss.lake"); err != nil {
		b.Fatal(err)
	}
	appendAll(b, cl, "fluss.lake", recs[len(recs)/2:])
	var cols []string
	for _, f := range benchSchema().Fields() {
		cols = append(cols, f.Name)
	}
	for _, c := range []struct {
		name string
		req  client.ScanRequest
		rows int64
	}{
		{"log", client.ScanRequest{Table: "fluss.log"}, rows},
		{"union", client.ScanRequest{Table: "fluss.lake"}, rows},
		{"lake", client.ScanRequest{Table: "fluss.lake$lake", Columns: cols}, rows / 2},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(batchesBytes(recs) * c.rows / rows)
			for b.Loop() {
				scanAll(b, cl, c.req, c.rows)
			}
		})
	}
}

func BenchmarkProjection(b *testing.B) {
	recs := benchBatchesData(memtest.Allocator(b))
	rows := int64(benchRows * benchBatches)
	cl, _ := startBench(b)
	if _, err := cl.CreateTable(context.Background(), benchSpec("fluss.t", "none"), false); err != nil {
		b.Fatal(err)
	}
	appendAll(b, cl, "fluss.t", recs)
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			scanAll(b, cl, client.ScanRequest{Table: "fluss.t"}, rows)
		}
	})
	b.Run("2of20", func(b *testing.B) {
		for b.Loop() {
			scanAll(b, cl, client.ScanRequest{Table: "fluss.t", Columns: []string{"c00", "c07"}}, rows)
		}
	})
}

// BenchmarkPrimaryKeyScan compares, through Flight, a plain-name read of a
// primary-key table (its current rows, from pebble) with a scan of a log
// table holding the same rows.
func BenchmarkPrimaryKeyScan(b *testing.B) {
	const rows = 1 << 20
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	var recs []arrow.RecordBatch
	for from := 0; from < rows; from += 16 << 10 {
		rb := array.NewRecordBuilder(memtest.Allocator(b), schema)
		for k := from; k < from+16<<10; k++ {
			rb.Field(0).(*array.Int64Builder).Append(int64(k))
			rb.Field(1).(*array.Int64Builder).Append(int64(k % 1000))
			rb.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("user-%07d", k))
		}
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	cl, _ := startBench(b)
	cols := []client.Column{{Name: "k", Type: "BIGINT", Nullable: new(false)}, {Name: "n", Type: "BIGINT"}, {Name: "s", Type: "STRING"}}
	for _, spec := range []client.TableSpec{
		{Table: "fluss.log", Columns: cols},
		{Table: "fluss.pk", Columns: cols, PrimaryKey: []string{"k"}},
	} {
		if _, err := cl.CreateTable(context.Background(), spec, false); err != nil {
			b.Fatal(err)
		}
		appendAll(b, cl, spec.Table, recs)
	}
	for _, table := range []string{"log", "pk"} {
		b.Run(table, func(b *testing.B) {
			for b.Loop() {
				scanAll(b, cl, client.ScanRequest{Table: "fluss." + table}, rows)
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
	// COUNT(*) pushed down: the same table's rows from its kept row count.
	b.Run("pk-count", func(b *testing.B) {
		for b.Loop() {
			if st, err := cl.TableStats(context.Background(), "fluss.pk"); err != nil || st.RowCount != rows {
				b.Fatalf("table-stats: %+v (%v), want %d rows", st, err, rows)
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

// BenchmarkLookupRoundTrip looks up one key at a time over one DoExchange
// stream and reports the round trip's median and 99th percentile.
func BenchmarkLookupRoundTrip(b *testing.B) {
	cl, _ := startBench(b)
	spec := client.TableSpec{
		Table: "fluss.kv", PrimaryKey: []string{"k"},
		Columns: []client.Column{{Name: "k", Type: "BIGINT"}, {Name: "v", Type: "STRING"}},
		Options: map[string]string{"bucket.num": "4"},
	}
	if _, err := cl.CreateTable(context.Background(), spec, false); err != nil {
		b.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	rb := array.NewRecordBuilder(memtest.Allocator(b), schema)
	for k := range 100_000 {
		rb.Field(0).(*array.Int64Builder).Append(int64(k))
		rb.Field(1).(*array.StringBuilder).Append("v")
	}
	rec := rb.NewRecordBatch()
	rb.Release()
	appendAll(b, cl, "fluss.kv", []arrow.RecordBatch{rec})
	l, err := cl.Lookup(context.Background(), client.LookupRequest{Table: "fluss.kv"})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	keys := make([]arrow.RecordBatch, 256)
	for i := range keys {
		kb := array.NewRecordBuilder(memtest.Allocator(b), arrow.NewSchema(schema.Fields()[:1], nil))
		kb.Field(0).(*array.Int64Builder).Append(int64(i * 331 % 100_000))
		keys[i] = kb.NewRecordBatch()
		kb.Release()
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		ans, meta, err := l.Lookup(keys[i%len(keys)])
		if err != nil || meta.Rows != 1 {
			b.Fatalf("%v, %+v", err, meta)
		}
		ans.Release()
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkLakeLag writes a lake-enabled log table steadily (a batch every
// 20 ms) for 10 s with table.datalake.freshness 1s, and reports the largest
// lake lag seen: at each poll, how long ago the oldest row not yet in the
// lake was acknowledged. PROTOCOL.md §7.2 promises freshness plus one round.
func BenchmarkLakeLag(b *testing.B) {
	const (
		runFor    = 10 * time.Second
		freshness = time.Second
		rows      = 2000
	)
	for b.Loop() {
		cl, _ := startBench(b)
		ctx := context.Background()
		spec := benchSpec("fluss.lag", "zstd")
		spec.Options["table.datalake.enabled"] = "true"
		spec.Options["table.datalake.freshness"] = freshness.String()
		if _, err := cl.CreateTable(ctx, spec, false); err != nil {
			b.Fatal(err)
		}
		data := benchBatchesData(memtest.Allocator(b))
		var acked []time.Time // acked[i]: when row i*rows.. was acknowledged
		var mu sync.Mutex
		done := make(chan error, 1)
		go func() {
			w, err := cl.NewWriter(ctx, client.WriteRequest{Table: "fluss.lag"})
			if err != nil {
				done <- err
				return
			}
			defer w.Close()
			for i := 0; time.Duration(i)*20*time.Millisecond < runFor; i++ {
				rec := data[i%len(data)].NewSlice(0, rows)
				_, err := w.Write(rec)
				rec.Release()
				if err != nil {
					done <- err
					return
				}
				mu.Lock()
				acked = append(acked, time.Now())
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
			done <- nil
		}()
		var worst time.Duration
	poll:
		for {
			select {
			case err := <-done:
				if err != nil {
					b.Fatal(err)
				}
				break poll
			case <-time.After(50 * time.Millisecond):
			}
			snap, err := cl.LakeSnapshot(ctx, "fluss.lag")
			tiered := int64(0)
			if err == nil {
				tiered = snap.Offsets[0]
			}
			mu.Lock()
			if k := int(tiered / rows); k < len(acked) {
				worst = max(worst, time.Since(acked[k]))
			}
			mu.Unlock()
		}
		b.ReportMetric(worst.Seconds(), "max-lag-s")
		b.ReportMetric(freshness.Seconds(), "freshness-s")
	}
}
