package flight_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// readTicketIDs redeems a ticket and returns its order ids in read order.
func readTicketIDs(t *testing.T, ts *testServer, ticket []byte) ([]int64, error) {
	t.Helper()
	s, err := ts.cl.ReadTicket(ctxT(t), ticket)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	var out []int64
	for s.Next() {
		out = append(out, column[*array.Int64](s.RecordBatch(), "order_id").Int64Values()...)
	}
	return out, s.Err()
}

// withField returns ticket with one field set (nil removes it).
func withField(t *testing.T, ticket []byte, key string, value any) []byte {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(ticket))
	dec.UseNumber() // snapshot ids do not fit a float64
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	if value == nil {
		delete(m, key)
	} else {
		m[key] = value
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A union ticket with lake_start resumes inside its lake part: the lake rows
// below that offset are skipped, those at or above it and the log after the
// lake come once each. A reader that checkpointed a batch's next in the lake
// part resumes from there without duplicates.
func TestUnionTicketResumesInsideTheLakePart(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, lakeOrdersSpec("orders", nil), false); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 0, 50, 4) // ids 0..199, tiered
	if _, err := ts.cl.TierNow(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	write(t, ts, "orders", 200, 50, 2) // ids 200..299, in the log only

	// Each lake row's offset in bucket 0, from the $lake view.
	lakeOffset := map[int64]int64{}
	sc, err := ts.cl.Scan(ctx, client.ScanRequest{Table: "orders$lake", Buckets: []int{0}, Columns: []string{"order_id", "__offset"}}, client.WithConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	for sc.Next() {
		rec := sc.RecordBatch()
		ids, offs := column[*array.Int64](rec, "order_id"), column[*array.Int64](rec, "__offset")
		for i := range ids.Len() {
			lakeOffset[ids.Value(i)] = offs.Value(i)
		}
	}
	sc.Release()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lakeOffset) < 2 {
		t.Fatalf("bucket 0 has %d lake rows; the test needs at least 2", len(lakeOffset))
	}

	plan, err := ts.cl.Plan(ctx, client.ScanRequest{Table: "orders", Buckets: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	ticket := plan.Endpoints[0].Ticket
	all, err := readTicketIDs(t, ts, ticket)
	if err != nil {
		t.Fatal(err)
	}
	offsets := make([]int64, 0, len(lakeOffset))
	for _, o := range lakeOffset {
		offsets = append(offsets, o)
	}
	slices.Sort(offsets)
	from := offsets[len(offsets)/2]
	var want []int64
	for _, id := range all {
		if o, inLake := lakeOffset[id]; !inLake || o >= from {
			want = append(want, id)
		}
	}
	got, err := readTicketIDs(t, ts, withField(t, ticket, "lake_start", from))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("union ticket with lake_start %d read %d ids, want the %d of offset >= %d and the log's", from, len(got), len(want), from)
	}
	// Past the last lake row: the log part alone.
	got, err = readTicketIDs(t, ts, withField(t, ticket, "lake_start", offsets[len(offsets)-1]+1))
	if err != nil {
		t.Fatal(err)
	}
	if wantLog := all[len(lakeOffset):]; !slices.Equal(got, wantLog) {
		t.Errorf("lake_start past the lake read %d ids, want the log part's %d", len(got), len(wantLog))
	}

	// lake_start belongs to lake and union tickets only.
	logTicket := withField(t, withField(t, withField(t, ticket, "view", "log"), "lake_snapshot_id", nil), "lake_start", 0)
	_, err = readTicketIDs(t, ts, logTicket)
	wantCode(t, err, codes.InvalidArgument)
	_, err = readTicketIDs(t, ts, withField(t, ticket, "lake_start", -1))
	wantCode(t, err, codes.InvalidArgument)
}
