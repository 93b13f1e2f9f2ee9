package flight_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// TestPartitionActionsAndScan drives a partitioned table as a plain Flight
// client (pyarrow's way) does: the partition actions as JSON, then a scan
// whose endpoints, plan and batch metadata name the partitions.
func TestPartitionActionsAndScan(t *testing.T) {
	ts := start(t, engine.Options{})
	fc := plainFlight(t, ts)
	mustAction := func(name, body string) []byte {
		t.Helper()
		b, err := doAction(t, fc, name, body)
		if err != nil {
			t.Fatalf("%s %s: %v", name, body, err)
		}
		return b
	}
	mustAction("create-table", `{"table": "events", "columns": [{"name": "id", "type": "BIGINT"}, {"name": "dt", "type": "STRING"}],
		"partition_keys": ["dt"], "options": {"bucket.num": "2", "bucket.key": "id"}}`)
	var info protocol.PartitionInfo
	if err := json.Unmarshal(mustAction("create-partition", `{"table": "events", "partition": {"dt": "20261201"}}`), &info); err != nil {
		t.Fatal(err)
	}
	if info.PartitionName != "20261201" || info.Spec["dt"] != "20261201" || info.PartitionID == 0 {
		t.Errorf("create-partition answered %+v", info)
	}
	_, err := doAction(t, fc, "create-partition", `{"table": "events", "partition": {"dt": "20261201"}}`)
	wantCode(t, err, codes.AlreadyExists)
	mustAction("create-partition", `{"table": "events", "partition": {"dt": "20261201"}, "if_not_exists": true}`)
	mustAction("create-partition", `{"table": "events", "partition": {"dt": "20261202"}}`)
	mustAction("create-partition", `{"table": "events", "partition": {"dt": "20261203"}}`)
	_, err = doAction(t, fc, "create-partition", `{"table": "events", "partition": {"day": "1"}}`)
	wantInvalid(t, "a spec without the partition key", err, "does not contain partition key 'dt'")

	// Paged like list-tables, in name order.
	var page protocol.ListPartitionsResult
	if err := json.Unmarshal(mustAction("list-partitions", `{"table": "events", "max_results": 2}`), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Partitions) != 2 || page.Partitions[1].PartitionName != "20261202" || page.NextPageToken == "" {
		t.Fatalf("first page %+v", page)
	}
	var rest protocol.ListPartitionsResult
	if err := json.Unmarshal(mustAction("list-partitions", `{"table": "events", "page_token": "`+page.NextPageToken+`"}`), &rest); err != nil {
		t.Fatal(err)
	}
	if len(rest.Partitions) != 1 || rest.Partitions[0].PartitionName != "20261203" || rest.NextPageToken != "" {
		t.Fatalf("second page %+v", rest)
	}
	mustAction("drop-partition", `{"table": "events", "partition": {"dt": "20261203"}}`)
	_, err = doAction(t, fc, "drop-partition", `{"table": "events", "partition": {"dt": "20261203"}}`)
	wantCode(t, err, codes.NotFound)
	mustAction("drop-partition", `{"table": "events", "partition": {"dt": "20261203"}, "if_exists": true}`)

	mustAction("create-table", `{"table": "plain", "columns": [{"name": "id", "type": "BIGINT"}]}`)
	_, err = doAction(t, fc, "list-partitions", `{"table": "plain"}`)
	wantCode(t, err, codes.FailedPrecondition)

	// Rows of two partitions, then a scan as pyarrow makes it.
	ws, err := ts.eng.OpenWrite(protocol.WriteRequest{Table: "events"})
	if err != nil {
		t.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "dt", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memtest.Allocator(t), schema)
	for i := range 10 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append([]string{"20261201", "20261202"}[i%2])
	}
	rec := b.NewRecordBatch()
	b.Release()
	res, err := ws.Write(ctxT(t), rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.PartitionOffsets) != 2 {
		t.Errorf("write result %+v", res)
	}

	fi, err := fc.GetFlightInfo(ctxT(t), &flight.FlightDescriptor{Type: flight.DescriptorCMD,
		Cmd: []byte(`{"scan": {"table": "events", "filter": {"eq": ["dt", "20261202"]}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	var meta protocol.PlanMeta
	if err := json.Unmarshal(fi.AppMetadata, &meta); err != nil {
		t.Fatal(err)
	}
	if len(meta.Partitions) != 1 || meta.Partitions[0].PartitionName != "20261202" || len(fi.Endpoint) != 2 {
		t.Fatalf("plan of a filtered scan: %s, %d endpoints", fi.AppMetadata, len(fi.Endpoint))
	}
	rows := 0
	for _, ep := range fi.Endpoint {
		rows += readPartitionStream(t, fc, ep.Ticket, "20261202")
	}
	if rows != 5 {
		t.Errorf("the scan of 20261202 read %d rows, want 5", rows)
	}
}

// readPartitionStream reads a ticket's batches, checking that each one's
// app_metadata names the partition, and returns the rows.
func readPartitionStream(t *testing.T, fc flight.Client, tk *flight.Ticket, partition string) int {
	t.Helper()
	var tkt protocol.Ticket
	if err := json.Unmarshal(tk.Ticket, &tkt); err != nil || tkt.Partition != partition || tkt.PartitionID == 0 {
		t.Fatalf("ticket %s (%v): want partition %s", tk.Ticket, err, partition)
	}
	stream, err := fc.DoGet(context.Background(), tk)
	if err != nil {
		t.Fatal(err)
	}
	r, err := flight.NewRecordReader(stream)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	rows := 0
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		var m protocol.BatchMeta
		if err := json.Unmarshal(r.LatestAppMetadata(), &m); err != nil || m.Partition != partition || m.PartitionID != tkt.PartitionID {
			t.Errorf("batch metadata %s (%v): want partition %s", r.LatestAppMetadata(), err, partition)
		}
		rows += int(rec.NumRows())
	}
}

// TestFollowDiscoversPartitions follows a partitioned table with the Go
// client: a partition created after the scan started is found and read from
// its earliest offset.
func TestFollowDiscoversPartitions(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, client.TableSpec{Table: "events",
		Columns:       []client.Column{{Name: "id", Type: "BIGINT"}, {Name: "dt", Type: "STRING"}},
		PartitionKeys: []string{"dt"}}, false); err != nil {
		t.Fatal(err)
	}
	write := func(create bool, ids []int64, day string) error {
		t.Helper()
		w, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: "events", CreatePartitions: &create})
		if err != nil {
			return err
		}
		schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "dt", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
		b := array.NewRecordBuilder(ts.mem, schema)
		for _, id := range ids {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append(day)
		}
		rec := b.NewRecordBatch()
		b.Release()
		defer rec.Release()
		if _, err := w.Write(rec); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	}
	if err := write(false, []int64{1}, "20261201"); status.Code(errors.Unwrap(err)) != codes.NotFound && !strings.Contains(fmt.Sprint(err), "partition dt=20261201 of table fluss.events does not exist") {
		t.Fatalf("write without creating the partition: %v", err)
	}
	if err := write(true, []int64{1, 2}, "20261201"); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sc, err := ts.cl.Scan(sctx, client.ScanRequest{Table: "events", Stop: client.Unbounded}, client.WithPartitionDiscovery(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	if len(sc.Plan().Meta.Partitions) != 1 {
		t.Fatalf("planned partitions %v", sc.Plan().Meta.Partitions)
	}
	if err := write(true, []int64{3, 4, 5}, "20261202"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for seen["20261201"] < 2 || seen["20261202"] < 3 {
		if !sc.Next() {
			t.Fatalf("the follow scan ended: %v (seen %v)", sc.Err(), seen)
		}
		seen[sc.Meta().Partition] += int(sc.RecordBatch().NumRows())
	}
	if seen["20261202"] != 3 {
		t.Errorf("rows of the discovered partition: %d, want 3", seen["20261202"])
	}
	parts, err := ts.cl.ListPartitions(ctx, "events", nil)
	if err != nil || len(parts) != 2 {
		t.Errorf("list partitions: %v %v", parts, err)
	}
	offs, err := ts.cl.ListPartitionOffsets(ctx, "events", client.Latest, []string{"20261202"}, nil)
	if err != nil || len(offs) != 1 || offs["20261202"][0] != 3 {
		t.Errorf("partition offsets: %v %v", offs, err)
	}
}

// A follower of a partition that is dropped is told that the partition was
// dropped (NOT_FOUND naming it), not that its table was; a follower of a
// table that is dropped is told the table was.
func TestFollowerOfADroppedPartition(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	fc := plainFlight(t, ts)
	for _, table := range []string{"events", "gone"} {
		if _, err := doAction(t, fc, "create-table", `{"table": "`+table+`", "columns": [{"name": "id", "type": "BIGINT"}, {"name": "dt", "type": "STRING"}], "partition_keys": ["dt"]}`); err != nil {
			t.Fatal(err)
		}
		if _, err := doAction(t, fc, "create-partition", `{"table": "`+table+`", "partition": {"dt": "20261201"}}`); err != nil {
			t.Fatal(err)
		}
	}
	follow := func(table string) flight.FlightService_DoGetClient {
		t.Helper()
		fi, err := fc.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"scan": {"table": "` + table + `", "stop": "none"}}`)})
		if err != nil {
			t.Fatal(err)
		}
		stream, err := fc.DoGet(ctx, fi.Endpoint[0].Ticket)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil { // the schema: the stream is open
			t.Fatal(err)
		}
		return stream
	}
	ended := func(stream flight.FlightService_DoGetClient) error {
		for {
			if _, err := stream.Recv(); err != nil {
				return err
			}
		}
	}
	partition, table := follow("events"), follow("gone")
	if _, err := doAction(t, fc, "drop-partition", `{"table": "events", "partition": {"dt": "20261201"}}`); err != nil {
		t.Fatal(err)
	}
	err := ended(partition)
	wantCode(t, err, codes.NotFound)
	if msg := status.Convert(err).Message(); !strings.Contains(msg, "partition 20261201 of table fluss.events was dropped") {
		t.Errorf("the follower of a dropped partition was told %q", msg)
	}
	if _, err := doAction(t, fc, "drop-table", `{"table": "gone"}`); err != nil {
		t.Fatal(err)
	}
	err = ended(table)
	wantCode(t, err, codes.NotFound)
	if msg := status.Convert(err).Message(); !strings.Contains(msg, "table fluss.gone was dropped") {
		t.Errorf("the follower of a dropped table was told %q", msg)
	}
}
