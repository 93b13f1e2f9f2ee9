package conformance

// partition-pruning, partition-follow-discovery and partition-restart
// (PROTOCOL.md "Partitioned tables"), on a log table events(id, dt, note)
// partitioned by dt and bucketed by id: writes route each row to its day, a
// filter on dt prunes whole partitions (counted in the server's log bytes
// read), a follow scan picks up a partition created after it started, and a
// restart keeps partitions, rows and offsets.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/promscrape"
)

// countedRead is one scan of a partitioned table: the partitions it planned,
// its endpoints, the ids it read, and the bytes the server read from its
// log files for it (the table's fluxgate_log_bytes_read_total).
type countedRead struct {
	planned   []string
	endpoints int
	rows      partRows
	logBytes  float64
}

func readCounted(ctx context.Context, env *Env, req client.ScanRequest) (countedRead, error) {
	var r countedRead
	plan, names, err := planParts(ctx, env, req)
	if err != nil {
		return r, err
	}
	r.planned, r.endpoints = names, len(plan.Endpoints)
	counter := map[string]string{"table": req.Table}
	before, err := promscrape.Sum(ctx, env.MetricsURL, "fluxgate_log_bytes_read_total", counter)
	if err != nil {
		return r, err
	}
	if r.rows, err = scanParts(ctx, env, plan); err != nil {
		return r, err
	}
	after, err := promscrape.Sum(ctx, env.MetricsURL, "fluxgate_log_bytes_read_total", counter)
	r.logBytes = after - before
	return r, err
}

// partitionPruning: a filter on dt plans and reads one partition of six, and
// the server reads from its log files exactly what a scan naming that
// partition reads; a full scan reads the sum of the partitions' reads.
func partitionPruning(ctx context.Context, env *Env) error {
	if err := env.needsMetrics(); err != nil {
		return err
	}
	table := env.Table("part_pruning")
	if _, err := createTable(ctx, env, partSpec(table, nil)); err != nil {
		return err
	}
	want, rows := dayRows(partDays, 300)
	if _, err := writePartRows(ctx, env, client.WriteRequest{Table: table}, rows); err != nil {
		return fmt.Errorf("write: %w", err)
	}

	all, err := readCounted(ctx, env, client.ScanRequest{Table: table})
	if err != nil {
		return fmt.Errorf("full scan: %w", err)
	}
	if err := equalPartRows("full scan", all.rows, want); err != nil {
		return err
	}
	if !slices.Equal(all.planned, partDays) || all.endpoints != 2*len(partDays) {
		return fmt.Errorf("full scan: planned partitions %v with %d endpoints, want %v with %d (one per partition and bucket)", all.planned, all.endpoints, partDays, 2*len(partDays))
	}
	named := map[string]float64{}
	var sumNamed float64
	for _, d := range partDays {
		one, err := readCounted(ctx, env, client.ScanRequest{Table: table, Partitions: []string{d}})
		if err != nil {
			return fmt.Errorf("scan of partition %s: %w", d, err)
		}
		if err := equalPartRows("scan of partition "+d, one.rows, partRows{d: want[d]}); err != nil {
			return err
		}
		named[d] = one.logBytes
		sumNamed += one.logBytes
	}
	if all.logBytes <= 0 || sumNamed != all.logBytes {
		return fmt.Errorf("the full scan read %.0f log bytes, the six one-partition scans %.0f together; want the same, above 0", all.logBytes, sumNamed)
	}

	day := partDays[3]
	filter := fmt.Appendf(nil, `{"eq": ["dt", %q]}`, day)
	got, err := readCounted(ctx, env, client.ScanRequest{Table: table, Filter: filter})
	if err != nil {
		return fmt.Errorf("scan with filter %s: %w", filter, err)
	}
	if err := equalPartRows(fmt.Sprintf("scan with filter %s", filter), got.rows, partRows{day: want[day]}); err != nil {
		return err
	}
	if !slices.Equal(got.planned, []string{day}) || got.endpoints != 2 {
		return fmt.Errorf("scan with filter %s: planned partitions %v with %d endpoints, want [%s] with 2", filter, got.planned, got.endpoints, day)
	}
	if got.logBytes != named[day] {
		return fmt.Errorf("scan with filter %s read %.0f log bytes, the scan naming partition %s %.0f; want the same (the other partitions pruned unread)", filter, got.logBytes, day, named[day])
	}
	// A filter no partition can match plans nothing and reads nothing.
	none, err := readCounted(ctx, env, client.ScanRequest{Table: table, Filter: []byte(`{"eq": ["dt", "19991231"]}`)})
	if err != nil {
		return err
	}
	if len(none.planned) != 0 || none.endpoints != 0 || none.logBytes != 0 {
		return fmt.Errorf(`scan with filter dt = "19991231": planned partitions %v with %d endpoints, read %.0f log bytes; want none`, none.planned, none.endpoints, none.logBytes)
	}
	return nil
}

// partitionFollowDiscovery: an unbounded scan with a short discovery
// interval reads the rows of a partition a writer creates after the scan
// started, from its first offset.
func partitionFollowDiscovery(ctx context.Context, env *Env) error {
	table := env.Table("part_follow")
	if _, err := createTable(ctx, env, partSpec(table, nil)); err != nil {
		return err
	}
	first, rows := dayRows(partDays[:1], 10)
	if _, err := writePartRows(ctx, env, client.WriteRequest{Table: table}, rows); err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := env.Client.Scan(sctx, client.ScanRequest{Table: table, Stop: client.Unbounded}, client.WithPartitionDiscovery(50*time.Millisecond))
	if err != nil {
		return fmt.Errorf("plan unbounded scan: %w", err)
	}
	defer s.Release()
	if names := partitionNames(s.Plan().Meta.Partitions); !slices.Equal(names, partDays[:1]) {
		return fmt.Errorf("unbounded scan planned partitions %v, want %v", names, partDays[:1])
	}
	type batch struct {
		meta client.BatchMeta
		ids  []int64
		err  error
	}
	batches := make(chan batch, 64)
	go func() {
		defer close(batches)
		for s.Next() {
			rec, m := s.RecordBatch(), s.Meta()
			if rec.NumRows() == 0 {
				continue
			}
			b := batch{meta: m, err: checkPartBatch(rec, m)}
			if b.err == nil {
				b.ids, b.err = int64Column(rec, "id")
			}
			batches <- b
		}
		if err := s.Err(); err != nil && status.Code(err) != codes.Canceled && !errors.Is(err, context.Canceled) {
			batches <- batch{err: err}
		}
	}()
	defer func() {
		cancel()
		for range batches {
		}
	}()
	await := func(want partRows, within time.Duration) error {
		got := partRows{}
		deadline := time.NewTimer(within)
		defer deadline.Stop()
		for !reflect.DeepEqual(sortedParts(got), want) {
			select {
			case b, ok := <-batches:
				if !ok {
					return fmt.Errorf("the unbounded scan ended while rows %v were awaited (got %v)", want, got)
				}
				if b.err != nil {
					return b.err
				}
				got[b.meta.Partition] = append(got[b.meta.Partition], b.ids...)
			case <-deadline.C:
				return fmt.Errorf("within %s the unbounded scan returned %v, want %v", within, sortedParts(got), want)
			}
		}
		return nil
	}
	if err := await(first, 5*time.Second); err != nil {
		return fmt.Errorf("rows written before the scan: %w", err)
	}
	later, rows := dayRows(partDays[1:3], 10)
	res, err := writePartRows(ctx, env, client.WriteRequest{Table: table}, rows)
	if err != nil {
		return fmt.Errorf("write two new partitions: %w", err)
	}
	if names := slices.Sorted(maps.Keys(res.PartitionOffsets)); !slices.Equal(names, partDays[1:3]) {
		return fmt.Errorf("the write to two new partitions acknowledged partition_offsets of %v, want %v", names, partDays[1:3])
	}
	// Discovery looks every 50 ms; a few seconds cover a loaded machine.
	if err := await(later, 5*time.Second); err != nil {
		return fmt.Errorf("rows of partitions created after the scan started: %w", err)
	}
	return nil
}

// partitionRestart: a restart keeps a partitioned table's partitions (names
// and ids), rows, offsets and tickets, and writes go on at the next offsets.
func partitionRestart(ctx context.Context, env *Env) error {
	if err := env.needsRestart(); err != nil {
		return err
	}
	table := env.Table("part_restart")
	if _, err := createTable(ctx, env, partSpec(table, nil)); err != nil {
		return err
	}
	want, rows := dayRows(partDays[:3], 50)
	if _, err := writePartRows(ctx, env, client.WriteRequest{Table: table}, rows); err != nil {
		return err
	}
	partsBefore, err := env.Client.ListPartitions(ctx, table, nil)
	if err != nil {
		return err
	}
	offsetsBefore, err := env.Client.ListPartitionOffsets(ctx, table, client.Latest, nil, nil)
	if err != nil {
		return err
	}
	plan, _, err := planParts(ctx, env, client.ScanRequest{Table: table})
	if err != nil {
		return err
	}

	if err := env.Restart(ctx); err != nil {
		return fmt.Errorf("restart: %w", err)
	}

	partsAfter, err := env.Client.ListPartitions(ctx, table, nil)
	if err != nil {
		return fmt.Errorf("after restart: %w", err)
	}
	if !reflect.DeepEqual(partsAfter, partsBefore) {
		return fmt.Errorf("list-partitions changed across the restart:\nbefore %+v\n after %+v", partsBefore, partsAfter)
	}
	offsetsAfter, err := env.Client.ListPartitionOffsets(ctx, table, client.Latest, nil, nil)
	if err != nil {
		return fmt.Errorf("after restart: %w", err)
	}
	if !reflect.DeepEqual(offsetsAfter, offsetsBefore) {
		return fmt.Errorf("list-offsets latest changed across the restart:\nbefore %v\n after %v", offsetsBefore, offsetsAfter)
	}
	got, err := scanParts(ctx, env, plan)
	if err != nil {
		return fmt.Errorf("redeem tickets planned before the restart: %w", err)
	}
	if err := equalPartRows("tickets planned before the restart", got, want); err != nil {
		return err
	}
	day := partDays[1]
	res, err := writePartRows(ctx, env, client.WriteRequest{Table: table, CreatePartitions: new(false)}, [][]any{{int64(5000), day, "after"}})
	if err != nil {
		return fmt.Errorf("write to partition %s after the restart: %w", day, err)
	}
	for b, end := range res.PartitionOffsets[day] {
		if want := offsetsBefore[day][b] + 1; end != want {
			return fmt.Errorf("after restart, partition %s bucket %d: the write acknowledged end offset %d, want %d (offsets continue)", day, b, end, want)
		}
	}
	if len(res.PartitionOffsets) != 1 || len(res.PartitionOffsets[day]) != 1 {
		return fmt.Errorf("a one-row write to partition %s acknowledged partition_offsets %v, want one bucket of it", day, res.PartitionOffsets)
	}
	return nil
}
