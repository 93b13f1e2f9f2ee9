package conformance

// partition-auto-retention (PROTOCOL.md "Automatic partitions", §7.7): a
// lake-enabled table partitioned by day with
// table.auto-partition.num-retention 2 is written across three days, today
// and the two before, and tiered; a day older than that is refused as out of
// date. Then the oldest day expires: its partition, log rows and offsets are
// gone, the next round drops it from the lake snapshot's offsets, and, by
// Fluss's rule, its rows stay in the lake, read lake-only by t$lake and the
// union read. The other two days are untouched.
//
// The scenario drives a real server, whose clock it cannot move. A day
// passing is stood in for by lowering num-retention from 2 to 1 with
// alter-table, which runs the auto-partition check at once: at day T with
// retention 1 the check drops what it would drop at day T+1 with retention
// 2. The table's time zone is the Etc/GMT zone in which it is about noon, so
// the day cannot change while the scenario runs.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
)

func partitionAutoRetention(ctx context.Context, env *Env) error {
	zone, loc := noonZone(time.Now())
	now := time.Now().In(loc)
	day := func(back int) string { return now.AddDate(0, 0, -back).Format("20060102") }
	days := []string{day(2), day(1), day(0)} // in name order
	table := env.Table("part_auto")
	if _, err := createTable(ctx, env, partSpec(table, map[string]string{
		"table.auto-partition.enabled":       "true",
		"table.auto-partition.time-unit":     "DAY",
		"table.auto-partition.time-zone":     zone,
		"table.auto-partition.num-precreate": "1",
		"table.auto-partition.num-retention": "2",
		"table.datalake.enabled":             "true",
		"table.datalake.freshness":           "1h",
	})); err != nil {
		return err
	}
	// create-table ran the first check: today's partition exists.
	parts, err := env.Client.ListPartitions(ctx, table, nil)
	if err != nil {
		return err
	}
	if names := partitionNames(parts); !slices.Equal(names, days[2:]) {
		return fmt.Errorf("after create-table with auto partitioning (zone %s, precreate 1): partitions %v, want today's %v", zone, names, days[2:])
	}

	want, rows := dayRows(days, 20)
	if _, err := writePartRows(ctx, env, client.WriteRequest{Table: table}, rows); err != nil {
		return fmt.Errorf("write to %v (today and the two days before, within retention 2): %w", days, err)
	}
	_, err = writePartRows(ctx, env, client.WriteRequest{Table: table}, [][]any{{int64(9999), day(3), "too old"}})
	if err := wantCode(fmt.Sprintf("write to day %s, three days back with num-retention 2", day(3)), err, codes.FailedPrecondition, day(3)); err != nil {
		return err
	}
	plan, _, err := planParts(ctx, env, client.ScanRequest{Table: table})
	if err != nil {
		return err
	}
	got, err := scanParts(ctx, env, plan)
	if err != nil {
		return err
	}
	if err := equalPartRows("before expiry", got, want); err != nil {
		return err
	}
	if err := tierParts(ctx, env, table, days); err != nil {
		return fmt.Errorf("before expiry: %w", err)
	}
	if err := readParts(ctx, env, client.ScanRequest{Table: table + "$lake"}, days, want, "$lake before expiry"); err != nil {
		return err
	}

	if _, err := env.Client.AlterTable(ctx, client.AlterRequest{Table: table, Set: map[string]string{"table.auto-partition.num-retention": "1"}}); err != nil {
		return fmt.Errorf("alter num-retention to 1: %w", err)
	}
	parts, err = env.Client.ListPartitions(ctx, table, nil)
	if err != nil {
		return err
	}
	if names := partitionNames(parts); !slices.Equal(names, days[1:]) {
		return fmt.Errorf("after the check with retention 1: partitions %v, want %v (%s expired)", names, days[1:], days[0])
	}
	kept := maps.Clone(want)
	delete(kept, days[0])
	if err := readParts(ctx, env, client.ScanRequest{Table: table, Startup: client.Earliest}, days[1:], kept, "the log after expiry"); err != nil {
		return err
	}
	if err := tierParts(ctx, env, table, days[1:]); err != nil {
		return fmt.Errorf("after expiry: %w", err)
	}
	// Fluss's rule: the expired day's rows stay in the lake, a partition
	// only the lake has (negative partition_id), in t$lake and the union read.
	for _, view := range []string{table + "$lake", table} {
		if err := readParts(ctx, env, client.ScanRequest{Table: view}, days, want, view+" after expiry"); err != nil {
			return err
		}
	}
	plan, _, err = planParts(ctx, env, client.ScanRequest{Table: table + "$lake"})
	if err != nil {
		return err
	}
	if p := plan.Meta.Partitions[0]; p.PartitionName != days[0] || p.PartitionID >= 0 {
		return fmt.Errorf("after expiry %s$lake plans partition %+v first, want %s with a negative partition_id (only in the lake)", table, p, days[0])
	}
	offsets, err := env.Client.ListPartitionOffsets(ctx, table, client.Latest, nil, nil)
	if err != nil {
		return err
	}
	if names := slices.Sorted(maps.Keys(offsets)); !slices.Equal(names, days[1:]) {
		return fmt.Errorf("after expiry list-offsets names partitions %v, want %v", names, days[1:])
	}
	_, err = env.Client.Plan(ctx, client.ScanRequest{Table: table, Partitions: days[:1]})
	return wantCode("scan of the expired partition", err, codes.NotFound, days[0])
}

// tierParts runs a tiering round and checks that the lake snapshot's
// offsets name exactly the partitions days, each at its log's end.
func tierParts(ctx context.Context, env *Env, table string, days []string) error {
	snap, err := env.Client.TierNow(ctx, table)
	if err != nil {
		return fmt.Errorf("tier-now: %w", err)
	}
	latest, err := env.Client.ListPartitionOffsets(ctx, table, client.Latest, nil, nil)
	if err != nil {
		return err
	}
	if !maps.EqualFunc(snap.PartitionOffsets, latest, maps.Equal) || !slices.Equal(slices.Sorted(maps.Keys(latest)), days) {
		return fmt.Errorf("tier-now answered partition_offsets %v, want the log's latest %v of partitions %v", snap.PartitionOffsets, latest, days)
	}
	return nil
}

// readParts scans req and checks that it plans partitions days and returns
// the ids want.
func readParts(ctx context.Context, env *Env, req client.ScanRequest, days []string, want partRows, what string) error {
	plan, names, err := planParts(ctx, env, req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !slices.Equal(names, days) {
		return fmt.Errorf("%s: planned partitions %v, want %v", what, names, days)
	}
	got, err := scanParts(ctx, env, plan)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return equalPartRows(what, got, want)
}

// noonZone returns the fixed-offset IANA zone (Etc/GMT±N) in which it is
// between 11:00 and 13:00 at t, and its location.
func noonZone(t time.Time) (string, *time.Location) {
	offset := 12 - t.UTC().Hour() // hours east of UTC: -11..12
	name := "Etc/GMT"
	switch {
	case offset > 0:
		name = fmt.Sprintf("Etc/GMT-%d", offset) // POSIX sign: GMT-N is N hours east
	case offset < 0:
		name = fmt.Sprintf("Etc/GMT+%d", -offset)
	}
	return name, time.FixedZone(name, offset*3600)
}
