package conformance

// restart, idempotent-retry and idempotent-retry-restart: what a server
// restart must keep (definitions, data, offsets, tickets, writer state) and
// idempotent writes (PROTOCOL.md §5 writer_id / first_sequence).

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/client"
)

func restartKeepsEverything(ctx context.Context, env *Env) error {
	if err := env.needsRestart(); err != nil {
		return err
	}
	table := env.Table("restart")
	spec := simpleSpec(table, 2, true)
	spec.Options["table.log.ttl"] = "3d"
	spec.Options["table.log.arrow.compression.type"] = "lz4_frame"
	if _, err := createTable(ctx, env, spec); err != nil {
		return err
	}
	if _, err := writeIDs(ctx, env, client.WriteRequest{Table: table}, idRange(0, 20), idRange(20, 15)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	infoBefore, err := env.Client.DescribeTable(ctx, table)
	if err != nil {
		return err
	}
	offsetsBefore, err := env.Client.ListOffsets(ctx, table, client.Latest, nil)
	if err != nil {
		return err
	}
	plan, err := env.Client.Plan(ctx, client.ScanRequest{Table: table})
	if err != nil {
		return err
	}
	idsBefore, err := planIDs(ctx, env, plan)
	if err != nil {
		return err
	}
	before, _, err := readBuckets(ctx, env, client.ScanRequest{Table: table})
	if err != nil {
		return err
	}
	defer releaseMap(before)

	if err := env.Restart(ctx); err != nil {
		return fmt.Errorf("restart: %w", err)
	}

	infoAfter, err := env.Client.DescribeTable(ctx, table)
	if err != nil {
		return fmt.Errorf("after restart: %w", err)
	}
	if !reflect.DeepEqual(infoBefore, infoAfter) {
		b, _ := json.Marshal(infoBefore)
		a, _ := json.Marshal(infoAfter)
		return fmt.Errorf("describe-table changed across the restart:\nbefore %s\n after %s", b, a)
	}
	offsetsAfter, err := env.Client.ListOffsets(ctx, table, client.Latest, nil)
	if err != nil {
		return fmt.Errorf("after restart: %w", err)
	}
	if err := equalOffsets("list-offsets latest after the restart (vs before)", offsetsAfter, offsetsBefore); err != nil {
		return err
	}
	after, _, err := readBuckets(ctx, env, client.ScanRequest{Table: table})
	if err != nil {
		return fmt.Errorf("read after restart: %w", err)
	}
	defer releaseMap(after)
	for _, b := range sortedKeys(before, after) {
		if before[b] == nil || after[b] == nil || !array.RecordEqual(before[b], after[b]) {
			return fmt.Errorf("bucket %d reads differently after the restart:\nbefore %v\n after %v", b, before[b], after[b])
		}
	}
	// Tickets are complete in themselves: one planned before the restart reads
	// the same after it.
	idsOld, err := planIDs(ctx, env, plan)
	if err != nil {
		return fmt.Errorf("redeem tickets planned before the restart: %w", err)
	}
	if err := equalBuckets("tickets planned before the restart", idsOld, idsBefore); err != nil {
		return err
	}
	return continuesOffsets(ctx, env, table, offsetsBefore)
}

// continuesOffsets writes ten rows and checks that they take the offsets
// right after from.
func continuesOffsets(ctx context.Context, env *Env, table string, from map[int]int64) error {
	res, err := writeIDs(ctx, env, client.WriteRequest{Table: table}, idRange(1000, 10))
	if err != nil {
		return fmt.Errorf("write after restart: %w", err)
	}
	ends := endOffsets(res...)
	recs, _, err := readBuckets(ctx, env, client.ScanRequest{
		Table: table + "$changelog", Columns: []string{"_log_offset", "id"}, Startup: client.AtOffsets(from),
	})
	if err != nil {
		return fmt.Errorf("read $changelog from %v after restart: %w", from, err)
	}
	defer releaseMap(recs)
	n := 0
	for _, b := range sortedKeys(from) {
		rec := recs[b]
		if rec == nil && ends[b] == 0 {
			continue
		}
		if rec == nil {
			return fmt.Errorf("after restart: the write acknowledged end offset %d in bucket %d, but $changelog from offset %d returns nothing", ends[b], b, from[b])
		}
		offsets, ok1 := rec.Column(0).(*array.Int64)
		ids, ok2 := rec.Column(1).(*array.Int64)
		if !ok1 || !ok2 {
			return fmt.Errorf("$changelog [_log_offset id]: unexpected schema %s", rec.Schema())
		}
		for i := range offsets.Len() {
			if want := from[b] + int64(i); offsets.Value(i) != want {
				return fmt.Errorf("after restart, bucket %d: new row %d (id %d) has _log_offset %d, want %d (offsets continue from %d)",
					b, i, ids.Value(i), offsets.Value(i), want, from[b])
			}
		}
		if end := from[b] + int64(offsets.Len()); end != ends[b] {
			return fmt.Errorf("after restart, bucket %d: rows end at offset %d, but the write acknowledged end offset %d", b, end, ends[b])
		}
		n += offsets.Len()
	}
	if n != 10 {
		return fmt.Errorf("after restart: %d new rows, want the 10 written", n)
	}
	return nil
}

func idempotentRetry(ctx context.Context, env *Env) error {
	return idempotentCase(ctx, env, "idempotent", false)
}

func idempotentRetryRestart(ctx context.Context, env *Env) error {
	if err := env.needsRestart(); err != nil {
		return err
	}
	return idempotentCase(ctx, env, "idempotent_restart", true)
}

// idempotentCase writes batches 0..4 as one writer, optionally restarts, then
// re-sends batches 3 and 4 plus a new batch 5 from first_sequence 3: the
// re-sent ones must be acknowledged with their first results and not applied
// again, the new one applied.
func idempotentCase(ctx context.Context, env *Env, name string, restart bool) error {
	table := env.Table(name)
	if _, err := createTable(ctx, env, simpleSpec(table, 3, true)); err != nil {
		return err
	}
	batches := make([][]int64, 6)
	for i := range batches {
		batches[i] = idRange(int64(i)*10, 10)
	}
	writer := "conformance-" + randomHex(8)
	first, err := writeIDs(ctx, env, client.WriteRequest{Table: table, WriterID: writer}, batches[:5]...)
	if err != nil {
		return fmt.Errorf("writer %s, first_sequence 0: %w", writer, err)
	}
	for i, r := range first {
		if r.Sequence != int64(i) {
			return fmt.Errorf("writer %s: batch %d acknowledged with sequence %d, want %d", writer, i, r.Sequence, i)
		}
	}
	if restart {
		if err := env.Restart(ctx); err != nil {
			return fmt.Errorf("restart: %w", err)
		}
	}
	retry, err := writeIDs(ctx, env, client.WriteRequest{Table: table, WriterID: writer, FirstSequence: 3}, batches[3:]...)
	if err != nil {
		return fmt.Errorf("writer %s, first_sequence 3 (re-sending batches 3 and 4, then 5): %w", writer, err)
	}
	for k, r := range retry[:2] {
		orig := first[3+k]
		if r.Sequence != orig.Sequence || r.Rows != orig.Rows || !maps.Equal(r.Buckets, orig.Buckets) {
			return fmt.Errorf("writer %s: re-sent batch %d acknowledged as %+v, want the first acknowledgement %+v", writer, 3+k, r, orig)
		}
	}
	if r := retry[2]; r.Sequence != 5 || r.Rows != 10 {
		return fmt.Errorf("writer %s: new batch 5 acknowledged as %+v, want sequence 5 and 10 rows", writer, r)
	}
	got, err := scanIDs(ctx, env, client.ScanRequest{Table: table})
	if err != nil {
		return err
	}
	if err := equalInts("the table after the retry", allIDs(got), idRange(0, 60)); err != nil {
		return err
	}
	offsets, err := env.Client.ListOffsets(ctx, table, client.Latest, nil)
	if err != nil {
		return err
	}
	want := map[int]int64{0: 0, 1: 0, 2: 0} // buckets no batch touched end at 0
	maps.Copy(want, endOffsets(append(first, retry[2])...))
	return equalOffsets("list-offsets latest after the retry (vs the acknowledgements)", offsets, want)
}
