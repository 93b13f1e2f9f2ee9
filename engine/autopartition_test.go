package engine

import (
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// fakeClock is the clock of automatic partitions in tests: it moves only
// when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// openAutoPartEngine opens an engine whose automatic partitions read clock,
// in UTC unless a table sets its zone.
func openAutoPartEngine(t *testing.T, dir string, clock *fakeClock) *Engine {
	t.Helper()
	e, err := Open(t.Context(), dir, Options{AutoPartition: AutoPartitionOptions{Now: clock.Now, Zone: time.UTC}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func createAutoPartitioned(t *testing.T, e *Engine, name string, keys []string, opts map[string]string) {
	t.Helper()
	cols := []catalog.Column{{Name: "v", Type: "BIGINT"}}
	for _, k := range keys {
		cols = append(cols, catalog.Column{Name: k, Type: "STRING"})
	}
	opts["table.auto-partition.enabled"] = "true"
	if _, err := e.CreateTable(t.Context(), catalog.TableSpec{Table: name, Columns: cols, PartitionKeys: keys, Options: opts}, false); err != nil {
		t.Fatal(err)
	}
}

// partitionNames lists a table's partitions by name, in name order.
func partitionNames(t *testing.T, e *Engine, table string) []string {
	t.Helper()
	parts, err := e.ListPartitions(table, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.PartitionName
	}
	return names
}

func wantPartitions(t *testing.T, e *Engine, table string, want ...string) {
	t.Helper()
	if got := partitionNames(t, e, table); !slices.Equal(got, want) {
		t.Fatalf("partitions of %s: %v, want %v", table, got, want)
	}
}

// A DAY table with retention 2: creating it makes today and tomorrow; each
// day's check makes the next day and, from the third day on, drops the day
// before the two retained ones, with its data; a restart checks at once and
// goes on.
func TestAutoPartitionDayRetention(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	e := openAutoPartEngine(t, dir, clock)
	spec := eventsSpec()
	spec.Options["table.auto-partition.enabled"] = "true"
	spec.Options["table.auto-partition.num-retention"] = "2"
	if _, err := e.CreateTable(t.Context(), spec, false); err != nil {
		t.Fatal(err)
	}
	wantPartitions(t, e, "events", "20261201", "20261202")
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{1, 2}, []string{"20261201", "20261202"})); err != nil {
		t.Fatal(err)
	}
	oldest, err := e.ListPartitions("events", map[string]string{"dt": "20261201"})
	if err != nil || len(oldest) != 1 {
		t.Fatalf("partition 20261201: %v %v", oldest, err)
	}

	clock.advance(24 * time.Hour)
	e.CheckAutoPartitions(t.Context())
	wantPartitions(t, e, "events", "20261201", "20261202", "20261203")
	clock.advance(24 * time.Hour)
	e.CheckAutoPartitions(t.Context())
	wantPartitions(t, e, "events", "20261201", "20261202", "20261203", "20261204")
	clock.advance(24 * time.Hour) // 12-04: keeps 12-02 and 12-03
	e.CheckAutoPartitions(t.Context())
	wantPartitions(t, e, "events", "20261202", "20261203", "20261204", "20261205")
	if _, err := os.Stat(e.tableDir(oldest[0].PartitionID)); !os.IsNotExist(err) {
		t.Errorf("the expired partition's log directory is still there: %v", err)
	}

	// Older than the retention is refused, by hand as by a writer.
	const outOfDate = "Partition value '20261201' is out-of-date. The earliest retained partition is '20261202'."
	_, err = e.CreatePartition(t.Context(), "events", map[string]string{"dt": "20261201"}, false)
	if errs.KindOf(err) != errs.FailedPrecondition || err.Error() != outOfDate {
		t.Errorf("create an out-of-date partition: %v", err)
	}
	_, err = writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{3}, []string{"20261201"}))
	if errs.KindOf(err) != errs.FailedPrecondition || !strings.Contains(err.Error(), outOfDate) {
		t.Errorf("write to an out-of-date partition: %v", err)
	}
	_, err = e.CreatePartition(t.Context(), "events", map[string]string{"dt": "2026-12-09"}, false)
	if errs.KindOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), "does not match the expected format 'yyyyMMdd'") {
		t.Errorf("partition of another format: %v", err)
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{4}, []string{"20261209"})); err != nil {
		t.Errorf("write to a future partition: %v", err)
	}

	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	clock.advance(2 * 24 * time.Hour) // 12-06: keeps 12-04 and 12-05
	e = openAutoPartEngine(t, dir, clock)
	defer e.Close()
	wantPartitions(t, e, "events", "20261204", "20261205", "20261206", "20261207", "20261209")
}

func TestAutoPartitionHour(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 12, 1, 22, 30, 0, 0, time.UTC)}
	e := openAutoPartEngine(t, t.TempDir(), clock)
	defer e.Close()
	createAutoPartitioned(t, e, "hours", []string{"h"}, map[string]string{
		"table.auto-partition.time-unit": "HOUR", "table.auto-partition.num-precreate": "3", "table.auto-partition.num-retention": "1",
	})
	wantPartitions(t, e, "hours", "2026120122", "2026120123", "2026120200")
	clock.advance(2 * time.Hour) // 00:30: keeps 23
	e.CheckAutoPartitions(t.Context())
	wantPartitions(t, e, "hours", "2026120123", "2026120200", "2026120201", "2026120202")
}

// Altering the retention applies at once; turning auto partitioning off
// stops it.
func TestAutoPartitionAlter(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	e := openAutoPartEngine(t, t.TempDir(), clock)
	defer e.Close()
	createAutoPartitioned(t, e, "months", []string{"m"}, map[string]string{
		"table.auto-partition.time-unit": "month", "table.auto-partition.time-format": "yyyy-MM",
	})
	for _, m := range []string{"2026-09", "2026-10", "2026-11"} {
		if _, err := e.CreatePartition(t.Context(), "months", map[string]string{"m": m}, false); err != nil {
			t.Fatal(err)
		}
	}
	wantPartitions(t, e, "months", "2026-09", "2026-10", "2026-11", "2026-12", "2027-01")
	if _, err := e.AlterTable(t.Context(), "months", map[string]string{"table.auto-partition.num-retention": "1"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	wantPartitions(t, e, "months", "2026-11", "2026-12", "2027-01")

	if _, err := e.AlterTable(t.Context(), "months", map[string]string{"table.auto-partition.enabled": "false"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	clock.advance(62 * 24 * time.Hour)
	e.CheckAutoPartitions(t.Context())
	wantPartitions(t, e, "months", "2026-11", "2026-12", "2027-01")
	// Off, the format still applies (as in Fluss), the retention does not.
	if _, err := e.CreatePartition(t.Context(), "months", map[string]string{"m": "2020-01"}, false); err != nil {
		t.Errorf("old partition with auto partitioning off: %v", err)
	}
	if _, err := e.CreatePartition(t.Context(), "months", map[string]string{"m": "202001"}, false); errs.KindOf(err) != errs.InvalidArgument {
		t.Errorf("partition of another format with auto partitioning off: %v", err)
	}
}

// With several partition keys nothing is pre-created, and expiry drops every
// partition of an old time, whatever its other values.
func TestAutoPartitionMultiKey(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)}
	e := openAutoPartEngine(t, t.TempDir(), clock)
	defer e.Close()
	createAutoPartitioned(t, e, "regions", []string{"region", "dt"}, map[string]string{
		"table.auto-partition.key": "dt", "table.auto-partition.num-retention": "2",
	})
	wantPartitions(t, e, "regions")
	for _, p := range [][2]string{{"eu", "20261201"}, {"us", "20261201"}, {"eu", "20261202"}, {"eu", "20261203"}} {
		if _, err := e.CreatePartition(t.Context(), "regions", map[string]string{"region": p[0], "dt": p[1]}, false); err != nil {
			t.Fatal(err)
		}
	}
	clock.advance(24 * time.Hour) // 12-04: keeps 12-02 and 12-03
	e.CheckAutoPartitions(t.Context())
	wantPartitions(t, e, "regions", "eu$20261202", "eu$20261203")
}
