package logwrite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A log table's batch is split by its bucket key: every bucket's log gets
// the rows the table's assigner gives it, and the result ends each bucket
// written at its new high watermark.
func TestStreamSplitsABatchByBucketKey(t *testing.T) {
	dir := t.TempDir()
	cat, err := catalog.Open(filepath.Join(dir, "catalog"), catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cat.Close(); err != nil {
			t.Error(err)
		}
	}()
	info, _, err := cat.CreateTable(catalog.TableSpec{
		Table:   "events",
		Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}, {Name: "name", Type: "STRING"}},
		Options: map[string]string{catalog.OptBucketNum: "3", catalog.OptBucketKey: "id"},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := table.Open(filepath.Join(dir, "log"), info, logstore.Options{}, memtest.Allocator(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := tbl.Log.Close(); err != nil {
			t.Error(err)
		}
	}()
	meter := noop.NewMeterProvider().Meter("test")
	rows, err := meter.Int64Counter("rows")
	if err != nil {
		t.Fatal(err)
	}
	bytes, err := meter.Int64Counter("bytes")
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Alloc: memtest.Allocator(t), Metrics: Metrics{Rows: rows, Bytes: bytes, Table: func(string) metric.MeasurementOption {
		return metric.WithAttributes()
	}}}
	w, err := openStream(env, tbl, tbl.Current(), protocol.WriteRequest{Table: "events"})
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memtest.Allocator(t), info.ArrowSchema(), strings.NewReader(
		`[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}, {"id": 4, "name": "d"}, {"id": 5, "name": "e"}, {"id": 6, "name": "f"}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	res, err := w.Write(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int64{}
	for _, b := range tbl.Assigner.Assign(rec, nil) {
		want[int(b)]++
	}
	if len(want) < 2 {
		t.Fatalf("the rows all hash to one bucket (%v): the test needs them split", want)
	}
	for b := range info.BucketCount() {
		if hw := tbl.Log.HighWatermark(b); hw != want[b] {
			t.Errorf("bucket %d holds %d rows, its bucket key gives it %d", b, hw, want[b])
		}
		if end, ok := res.Buckets[b]; ok != (want[b] > 0) || end != want[b] {
			t.Errorf("bucket %d: the result ends it at %d (%v), want %d", b, end, ok, want[b])
		}
	}
}
