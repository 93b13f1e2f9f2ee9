package main

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
)

// TestAutoPartitionsThroughServer drives a served day table with retention
// 2 on the server's clock: the periodic check (every
// --auto-partition-check-interval) drops the expired partition and creates
// the new days, and an out-of-date partition is FAILED_PRECONDITION.
func TestAutoPartitionsThroughServer(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	srv := startAuthServerAt(t, clock, "--auto-partition-check-interval", "10ms")
	c, err := dial(t, srv.FlightAddr())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err = c.CreateTable(ctx, client.TableSpec{
		Table:         "events",
		Columns:       []client.Column{{Name: "id", Type: "BIGINT"}, {Name: "dt", Type: "STRING"}},
		PartitionKeys: []string{"dt"},
		Options: map[string]string{
			"table.auto-partition.enabled": "true", "table.auto-partition.num-retention": "2",
			"table.auto-partition.time-zone": "UTC",
		},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		parts, err := c.ListPartitions(ctx, "events", nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range parts {
			out = append(out, p.PartitionName)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"20261201", "20261202"}) {
		t.Fatalf("partitions after create: %v", got)
	}

	now.Add(int64(3 * 24 * time.Hour)) // 12-04: keeps 12-02 and 12-03
	want := []string{"20261202", "20261204", "20261205"}
	for got := names(); !slices.Equal(got, want); got = names() {
		if ctx.Err() != nil {
			t.Fatalf("partitions after three days: %v, want %v", got, want)
		}
		time.Sleep(5 * time.Millisecond) // poll the periodic check's result
	}
	_, err = c.CreatePartition(ctx, "events", client.PartitionSpec{"dt": "20261201"}, false)
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("out-of-date partition: %v, want FAILED_PRECONDITION", err)
	}
}
