package conformance

// lookup-concurrency and lookup-concurrency-restart: eight clients map
// overlapping random key sets through insert-if-not-exists lookups at once
// (PROTOCOL.md §6.3): every key gets exactly one id whoever asks, ids are
// unique and dense (§5.2), and the $changelog holds exactly one insert per
// key. After a restart the ids stay, lookups return them, and a new key gets
// an id above every old one, skipping at most the id cache.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"

	"github.com/fluxgate-io/fluxgate/client"
)

const (
	concClients  = 8
	concKeys     = 2000
	concPerBatch = 50
	concCache    = 64
)

func lookupConcurrency(ctx context.Context, env *Env) error {
	seed := scenarioSeed()
	_, _, dense, err := concurrentDictionary(ctx, env, "lk_conc", seed)
	if err = errors.Join(err, dense); err != nil {
		return fmt.Errorf("%w (seed %d: rerun with CONFORMANCE_SEED=%d)", err, seed, seed)
	}
	return nil
}

func lookupConcurrencyRestart(ctx context.Context, env *Env) error {
	if err := env.needsRestart(); err != nil {
		return err
	}
	seed := scenarioSeed()
	if err := concurrencyRestart(ctx, env, seed); err != nil {
		return fmt.Errorf("%w (seed %d: rerun with CONFORMANCE_SEED=%d)", err, seed, seed)
	}
	return nil
}

func concKey(i int) string { return fmt.Sprintf("key-%04d", i) }

// concurrentDictionary creates a dictionary table and has concClients
// clients map random overlapping subsets of concKeys keys into it at once,
// each through its own pipelined stream. It checks the outcome and returns
// the table and each key's id, and apart, so that the checks after it still
// run, whether the ids are dense (PROTOCOL.md §5.2).
func concurrentDictionary(ctx context.Context, env *Env, name string, seed int64) (_ *pkTable, _ map[string]int64, dense, _ error) {
	t, _, err := createPK(ctx, env, client.TableSpec{
		Table:      env.Table(name),
		Columns:    []client.Column{{Name: "k", Type: "STRING"}, {Name: "id", Type: "BIGINT"}, {Name: "note", Type: "STRING"}},
		PrimaryKey: []string{"k"},
		Options: map[string]string{"bucket.num": "3", "auto-increment.fields": "id",
			"table.auto-increment.cache-size": strconv.Itoa(concCache)},
	})
	if err != nil {
		return nil, nil, nil, err
	}
	// Each client takes every key with probability 1/4, in its own order,
	// and asks for some keys twice.
	rng := rand.New(rand.NewPCG(uint64(seed), 11))
	plans := make([][]string, concClients)
	asked := map[string]bool{}
	for c := range plans {
		for i := range concKeys {
			if rng.IntN(4) == 0 {
				plans[c] = append(plans[c], concKey(i))
				asked[concKey(i)] = true
			}
		}
		rng.Shuffle(len(plans[c]), func(i, j int) { plans[c][i], plans[c][j] = plans[c][j], plans[c][i] })
		for range len(plans[c]) / 20 {
			plans[c] = append(plans[c], plans[c][rng.IntN(len(plans[c]))])
		}
	}

	got := make([]map[string]int64, concClients)
	errs := make([]error, concClients)
	var wg sync.WaitGroup
	for c := range concClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[c], errs[c] = mapConcurrently(ctx, env, t, plans[c])
			if errs[c] != nil {
				errs[c] = fmt.Errorf("client %d: %w", c, errs[c])
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, nil, err
		}
	}

	// One id per key, whoever asked.
	ids := map[string]int64{}
	owner := map[string]int{}
	for c, m := range got {
		for k, id := range m {
			if prev, ok := ids[k]; ok && prev != id {
				return nil, nil, nil, fmt.Errorf("key %s: client %d got id %d, client %d got id %d; concurrent lookups of a key must return the same id", k, owner[k], prev, c, id)
			}
			ids[k], owner[k] = id, c
		}
	}
	if len(ids) != len(asked) {
		return nil, nil, nil, fmt.Errorf("%d keys were asked for, %d have ids", len(asked), len(ids))
	}
	if err := checkDictionary(ctx, env, t, ids, "after the concurrent lookups"); err != nil {
		return nil, nil, nil, err
	}
	byID := map[int64]int64{}
	i := int64(0)
	for _, id := range ids {
		byID[i] = id
		i++
	}
	dense = denseFrom(fmt.Sprintf("%s after %d concurrent insert-if-not-exists clients", t.name, concClients), byID, 1)
	return t, ids, dense, nil
}

// mapConcurrently maps keys through one insert-if-not-exists stream, in
// batches of concPerBatch, several in flight.
func mapConcurrently(ctx context.Context, env *Env, t *pkTable, keys []string) (map[string]int64, error) {
	lk, err := openLookup(ctx, env, t, client.LookupRequest{Table: t.name, InsertIfNotExists: true, Columns: []string{"k", "id"}}, t.fields([]string{"k"}))
	if err != nil {
		return nil, err
	}
	defer lk.l.Close()
	var batches [][][]any
	for len(keys) > 0 {
		n := min(len(keys), concPerBatch)
		b := make([][]any, n)
		for i, k := range keys[:n] {
			b[i] = []any{k}
		}
		batches = append(batches, b)
		keys = keys[n:]
	}
	out := map[string]int64{}
	const ahead = 4
	for i := 0; i < len(batches)+ahead-1; i++ {
		if i < len(batches) {
			if err := lk.send(batches[i]); err != nil {
				return nil, err
			}
		}
		j := i - (ahead - 1) // the batch whose answer is due
		if j < 0 {
			continue
		}
		rows, err := lk.recv(len(batches[j]))
		if err != nil {
			return nil, err
		}
		if len(rows) != len(batches[j]) {
			return nil, fmt.Errorf("%s of %d keys: %d rows; want one per key", lk.what, len(batches[j]), len(rows))
		}
		for _, r := range rows {
			k := batches[j][r.key][0].(string)
			id, ok := r.row[1].(int64)
			if r.row[0] != k || !ok {
				return nil, fmt.Errorf("%s: key %q answered with %s", lk.what, k, fmtRow(r.row))
			}
			if prev, seen := out[k]; seen && prev != id {
				return nil, fmt.Errorf("%s: key %q got id %d, earlier %d", lk.what, k, id, prev)
			}
			out[k] = id
		}
	}
	return out, lk.close()
}

// checkDictionary checks the table against each key's id: the snapshot is
// exactly (k, id, NULL), ids are unique, and the $changelog holds one insert
// per key and nothing else.
func checkDictionary(ctx context.Context, env *Env, t *pkTable, ids map[string]int64, when string) error {
	seen := map[int64]string{}
	want := pkState{}
	for k, id := range ids {
		if other, dup := seen[id]; dup {
			return fmt.Errorf("%s: keys %q and %q both have id %d", when, other, k, id)
		}
		seen[id] = k
		r := []any{k, id, nil}
		want[t.keyOf(r)] = r
	}
	cl, err := checkConsistent(ctx, env, t, true, want, when)
	if err != nil {
		return err
	}
	kinds := cl.kinds()
	if kinds[ctInsert] != len(ids) || len(kinds) != 1 {
		return fmt.Errorf("%s: %s has change types %v; want exactly one insert per key (%d keys) and no other rows", when, t.changelog(), kinds, len(ids))
	}
	return nil
}

func concurrencyRestart(ctx context.Context, env *Env, seed int64) error {
	t, ids, dense, err := concurrentDictionary(ctx, env, "lk_conc_restart", seed)
	if err != nil {
		return err
	}
	err = concurrencyAfterRestart(ctx, env, t, ids)
	return errors.Join(dense, err)
}

func concurrencyAfterRestart(ctx context.Context, env *Env, t *pkTable, ids map[string]int64) error {
	if err := env.Restart(ctx); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	if err := checkDictionary(ctx, env, t, ids, "after the restart"); err != nil {
		return err
	}
	// Lookups, plain and insert-if-not-exists, return the same ids.
	keys := slices.Sorted(maps.Keys(ids))
	rows := make([][]any, len(keys))
	for i, k := range keys {
		rows[i] = []any{k}
	}
	for _, insert := range []bool{false, true} {
		req := client.LookupRequest{Table: t.name, InsertIfNotExists: insert}
		got, err := lookupOnce(ctx, env, t, req, t.fields([]string{"k"}), rows)
		if err != nil {
			return fmt.Errorf("after the restart: %w", err)
		}
		if len(got) != len(keys) {
			return fmt.Errorf("after the restart: %s of %d keys: %d rows", describeLookup(req), len(keys), len(got))
		}
		for _, r := range got {
			if r.row[1] != ids[keys[r.key]] {
				return fmt.Errorf("after the restart: %s: key %q has id %s, before the restart %d", describeLookup(req), keys[r.key], fmtValue(r.row[1]), ids[keys[r.key]])
			}
		}
	}
	// New keys, from two clients at once, get new ids above the old ones.
	maxOld := slices.Max(slices.Collect(maps.Values(ids)))
	fresh := [][]string{{"new-0", "new-1", "new-2", "shared"}, {"shared", "new-3", "new-4"}}
	got := make([]map[string]int64, len(fresh))
	errs := make([]error, len(fresh))
	var wg sync.WaitGroup
	for c := range fresh {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[c], errs[c] = mapConcurrently(ctx, env, t, fresh[c])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("after the restart: %w", err)
		}
	}
	if got[0]["shared"] != got[1]["shared"] {
		return fmt.Errorf("after the restart: key \"shared\" got ids %d and %d from two clients", got[0]["shared"], got[1]["shared"])
	}
	for _, m := range got {
		maps.Copy(ids, m)
	}
	newIDs := map[int64]int64{}
	for _, k := range []string{"new-0", "new-1", "new-2", "new-3", "new-4", "shared"} {
		newIDs[int64(len(newIDs))] = ids[k]
	}
	lo := slices.Min(slices.Collect(maps.Values(newIDs)))
	if lo <= maxOld || lo > maxOld+concCache+1 {
		return fmt.Errorf("after the restart, the first new key got id %d; want above %d (no id reissued) and at most %d (at most table.auto-increment.cache-size = %d ids skipped)", lo, maxOld, maxOld+concCache+1, concCache)
	}
	if err := denseFrom("the keys inserted after the restart", newIDs, lo); err != nil {
		return err
	}
	return checkDictionary(ctx, env, t, ids, "after new keys were inserted after the restart")
}
