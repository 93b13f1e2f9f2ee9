package conformance

// pk-auto-increment and pk-auto-increment-restart: the auto-increment column
// (PROTOCOL.md §5.2, as in Fluss): ids 1, 2, 3, ... over the whole table in
// insertion order while the server runs, assigned only to new keys, never
// changed by updates, new for a key deleted and inserted again, never written
// by a writer, and never reissued after a restart, which skips at most
// table.auto-increment.cache-size ids.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
)

const autoIncCache = 10

func autoIncSpec(table string, buckets int) client.TableSpec {
	return client.TableSpec{
		Table: table,
		Columns: []client.Column{
			{Name: "k", Type: "BIGINT"},
			{Name: "uid", Type: "BIGINT"},
			{Name: "v", Type: "STRING"},
		},
		PrimaryKey: []string{"k"},
		Options: map[string]string{
			"bucket.num": strconv.Itoa(buckets), "auto-increment.fields": "uid",
			"table.auto-increment.cache-size": strconv.Itoa(autoIncCache),
		},
	}
}

// kvRows are (k, v) rows for keys, v = prefix + k.
func kvRows(keys []int64, prefix string) pkBatch {
	out := make(pkBatch, len(keys))
	for i, k := range keys {
		out[i] = []any{k, prefix + strconv.FormatInt(k, 10)}
	}
	return out
}

// autoIncWriter is how a writer of (k, v) rows addresses the table: by the
// plain PATH (the whole row but the id) or by naming the columns.
func autoIncWriter(table string, w int) client.WriteRequest {
	if w%2 == 0 {
		return client.WriteRequest{Table: table}
	}
	return client.WriteRequest{Table: table, Mode: client.ModeUpsert, Columns: []string{"k", "v"}}
}

// ids returns each key's id from a snapshot of the table.
func autoIDs(state pkState) (map[int64]int64, error) {
	out := map[int64]int64{}
	for k, r := range state {
		key, ok1 := r[0].(int64)
		id, ok2 := r[1].(int64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("key %s has row %s; want a BIGINT id assigned by the server", k, fmtRow(r))
		}
		out[key] = id
	}
	return out, nil
}

// denseFrom checks that ids are exactly from, from+1, ..., each once.
func denseFrom(what string, ids map[int64]int64, from int64) error {
	got := slices.Sorted(maps.Values(ids))
	want := idRange(from, int64(len(ids)))
	if slices.Equal(got, want) {
		return nil
	}
	return fmt.Errorf("%s: the ids of %d keys are %s; want each of %d..%d once (dense, in insertion order)", what, len(ids), abbrev(got), from, from+int64(len(ids))-1)
}

// inRowOrder checks that within each bucket the ids of a batch's keys grow in
// the batch's row order.
func inRowOrder(what string, keys []int64, ids map[int64]int64, bucketOf map[string]int) error {
	last := map[int]int64{}
	lastKey := map[int]int64{}
	for _, k := range keys {
		b := bucketOf[strconv.FormatInt(k, 10)]
		if prev, ok := last[b]; ok && ids[k] <= prev {
			return fmt.Errorf("%s: in bucket %d key %d (written after key %d) has id %d, key %d has id %d; want ids in insertion order", what, b, k, lastKey[b], ids[k], lastKey[b], prev)
		}
		last[b], lastKey[b] = ids[k], k
	}
	return nil
}

func pkAutoIncrement(ctx context.Context, env *Env) error {
	t, info, err := createPK(ctx, env, autoIncSpec(env.Table("autoinc"), 4))
	if err != nil {
		return err
	}
	if got := info.Options["table.auto-increment.cache-size"]; got != strconv.Itoa(autoIncCache) {
		return fmt.Errorf("create-table %s: TableInfo option table.auto-increment.cache-size = %q, want %q", t.name, got, strconv.Itoa(autoIncCache))
	}
	kv := []string{"k", "v"}

	// One batch over all buckets: ids 1..20.
	first := idRange(0, 20)
	if _, err := writeRows(ctx, env, t, client.WriteRequest{Table: t.name}, kv, kvRows(first, "v")); err != nil {
		return fmt.Errorf("write keys 0..19 without the id column: %w", err)
	}
	state, bucketOf, err := readSnapshot(ctx, env, t)
	if err != nil {
		return err
	}
	ids, err := autoIDs(state)
	if err != nil {
		return err
	}
	if err := denseFrom("after a first batch of 20 keys", ids, 1); err != nil {
		return err
	}
	if err := inRowOrder("the first batch", first, ids, bucketOf); err != nil {
		return err
	}

	// Three writers insert new keys concurrently, six batches each.
	const writers, batches, per = 3, 6, 10
	keysOf := func(w, b int) []int64 { return idRange(int64(1000*(w+1)+per*b), per) }
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var bs []pkBatch
			for b := range batches {
				bs = append(bs, kvRows(keysOf(w, b), "v"))
			}
			if _, err := writeRows(ctx, env, t, autoIncWriter(t.name, w), kv, bs...); err != nil {
				errs[w] = fmt.Errorf("writer %d (%+v): %w", w, autoIncWriter(t.name, w), err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	n := int64(len(first) + writers*batches*per)
	if state, bucketOf, err = readSnapshot(ctx, env, t); err != nil {
		return err
	}
	if ids, err = autoIDs(state); err != nil {
		return err
	}
	if err := denseFrom(fmt.Sprintf("after %d keys from concurrent writers", n), ids, 1); err != nil {
		return err
	}
	for w := range writers {
		prevMax := int64(0)
		for b := range batches {
			keys := keysOf(w, b)
			what := fmt.Sprintf("writer %d batch %d (keys %d..%d)", w, b, keys[0], keys[len(keys)-1])
			if err := inRowOrder(what, keys, ids, bucketOf); err != nil {
				return err
			}
			lo, hi := ids[keys[0]], ids[keys[0]]
			for _, k := range keys {
				lo, hi = min(lo, ids[k]), max(hi, ids[k])
			}
			if lo <= prevMax {
				return fmt.Errorf("%s: ids %d..%d, but the writer's earlier batches have ids up to %d; want later inserts to get later ids", what, lo, hi, prevMax)
			}
			prevMax = hi
		}
	}

	// Updates, concurrent again, keep every id.
	all := slices.Sorted(maps.Keys(ids))
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []int64
			for i, k := range all {
				if i%2 == w {
					mine = append(mine, k)
				}
			}
			if _, err := writeRows(ctx, env, t, autoIncWriter(t.name, w), kv, kvRows(mine, "u")); err != nil {
				errs[w] = fmt.Errorf("updating writer %d: %w", w, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs[:2] {
		if err != nil {
			return err
		}
	}
	want := pkState{}
	for k, id := range ids {
		r := []any{k, id, "u" + strconv.FormatInt(k, 10)}
		want[t.keyOf(r)] = r
	}
	if _, err := checkConsistent(ctx, env, t, true, want, "after every key was updated (ids must not change)"); err != nil {
		return err
	}

	// A key deleted and inserted again gets the next id; so does a new key.
	if _, err := writeRows(ctx, env, t, client.WriteRequest{Table: t.name, Mode: client.ModeDelete}, []string{"k"}, pkBatch{{int64(0)}}); err != nil {
		return fmt.Errorf("delete key 0: %w", err)
	}
	delete(want, "0")
	if err := insertGetsID(ctx, env, t, want, 0, n+1, "key 0, deleted and inserted again"); err != nil {
		return err
	}
	if err := insertGetsID(ctx, env, t, want, 9999, n+2, "new key 9999"); err != nil {
		return err
	}

	// Writers may not write the id column, however they name it.
	row := pkBatch{{int64(9998), int64(5), "x"}}
	cases := []struct {
		what string
		req  client.WriteRequest
		cols []string
		rows pkBatch
	}{
		{"an upsert naming columns [k, uid, v]", client.WriteRequest{Table: t.name, Columns: []string{"k", "uid", "v"}}, []string{"k", "uid", "v"}, row},
		{"a PATH upsert of a batch with the id column", client.WriteRequest{Table: t.name}, []string{"k", "uid", "v"}, row},
		{"an upsert naming columns [k, uid]", client.WriteRequest{Table: t.name, Columns: []string{"k", "uid"}}, []string{"k", "uid"}, pkBatch{{int64(9998), int64(5)}}},
	}
	// Every case runs, and what follows too, so that one wrong code does not
	// hide the others.
	var wrong []error
	for _, tc := range cases {
		_, err := writeRows(ctx, env, t, tc.req, tc.cols, tc.rows)
		if err := wantCode(fmt.Sprintf("%s to %s, whose auto-increment column is uid", tc.what, t.name), err, codes.FailedPrecondition, "uid"); err != nil {
			wrong = append(wrong, err)
		}
	}
	if _, err := checkConsistent(ctx, env, t, true, want, "after the refused writes of the id column"); err != nil {
		return errors.Join(append(wrong, err)...)
	}
	if err := insertGetsID(ctx, env, t, want, 9998, n+3, "new key 9998 after the refused writes"); err != nil {
		wrong = append(wrong, err)
	}
	return errors.Join(wrong...)
}

// insertGetsID inserts key and checks that it got id want, and that the
// table is then exactly state plus that row.
func insertGetsID(ctx context.Context, env *Env, t *pkTable, state pkState, key, want int64, what string) error {
	if _, err := writeRows(ctx, env, t, client.WriteRequest{Table: t.name}, []string{"k", "v"}, kvRows([]int64{key}, "n")); err != nil {
		return fmt.Errorf("insert %s: %w", what, err)
	}
	got, _, err := readSnapshot(ctx, env, t)
	if err != nil {
		return err
	}
	r := got[strconv.FormatInt(key, 10)]
	if r == nil || r[1] != want {
		return fmt.Errorf("%s: row %s; want id %d, the next one (ids are dense while the server runs)", what, fmtRow(r), want)
	}
	state[t.keyOf(r)] = []any{key, want, "n" + strconv.FormatInt(key, 10)}
	return equalStates("after inserting "+what, got, state)
}

func pkAutoIncrementRestart(ctx context.Context, env *Env) error {
	if err := env.needsRestart(); err != nil {
		return err
	}
	t, _, err := createPK(ctx, env, autoIncSpec(env.Table("autoinc_restart"), 2))
	if err != nil {
		return err
	}
	kv := []string{"k", "v"}
	old := idRange(0, 25)
	if _, err := writeRows(ctx, env, t, client.WriteRequest{Table: t.name}, kv, kvRows(old[:10], "v"), kvRows(old[10:20], "v"), kvRows(old[20:], "v")); err != nil {
		return err
	}
	before, _, err := readSnapshot(ctx, env, t)
	if err != nil {
		return err
	}
	ids, err := autoIDs(before)
	if err != nil {
		return err
	}
	if err := denseFrom("before the restart", ids, 1); err != nil {
		return err
	}

	if err := env.Restart(ctx); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	if _, err := checkConsistent(ctx, env, t, true, before, "after the restart"); err != nil {
		return err
	}
	fresh := idRange(100, 15)
	if _, err := writeRows(ctx, env, t, client.WriteRequest{Table: t.name}, kv, kvRows(fresh, "v"), kvRows(old, "u")); err != nil {
		return fmt.Errorf("write after the restart: %w", err)
	}
	after, _, err := readSnapshot(ctx, env, t)
	if err != nil {
		return err
	}
	all, err := autoIDs(after)
	if err != nil {
		return err
	}
	for _, k := range old {
		if all[k] != ids[k] {
			return fmt.Errorf("after the restart and an update, key %d has id %d; it had %d", k, all[k], ids[k])
		}
	}
	newIDs := map[int64]int64{}
	for _, k := range fresh {
		newIDs[k] = all[k]
	}
	lo := slices.Min(slices.Collect(maps.Values(newIDs)))
	const maxBefore = 25
	if lo <= maxBefore || lo > maxBefore+autoIncCache+1 {
		return fmt.Errorf("after the restart, the first new key got id %d; want above %d (no id reissued) and at most %d (at most table.auto-increment.cache-size = %d ids skipped)", lo, maxBefore, maxBefore+autoIncCache+1, autoIncCache)
	}
	if err := denseFrom("the keys inserted after the restart", newIDs, lo); err != nil {
		return err
	}
	want := pkState{}
	for k, id := range all {
		v := "u"
		if k >= 100 {
			v = "v"
		}
		r := []any{k, id, v + strconv.FormatInt(k, 10)}
		want[t.keyOf(r)] = r
	}
	_, err = checkConsistent(ctx, env, t, true, want, "after writing on after the restart")
	return err
}
