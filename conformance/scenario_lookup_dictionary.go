package conformance

// lookup-global-dictionary: count distinct users per dimension the way
// Fluss's auto-increment and insert-if-not-exists lookups describe. A stream of events carries STRING user ids
// ("u-123") and BIGINT user ids; insert-if-not-exists lookups (PROTOCOL.md
// §6.3) map each kind to dense INT ids through its own dictionary table
// with an auto-increment column, batch by batch, and an aggregation table
// collects the mapped ids per dimension in rbm32 bitmaps. The bitmaps' ids
// and cardinalities must be the exact distinct users, the ids 1..N in each
// dictionary (one writer: dense), and no key's id may ever change.

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/fluxgate-io/fluxgate/client"
)

const (
	dictBatches   = 25
	dictEvents    = 80
	dictDims      = 5
	dictUserRange = 700 // user ids 0..699 of each kind
)

// dictEvent is one input event: a dimension and a user id, either a STRING
// ("u-<n>") or a BIGINT.
type dictEvent struct {
	dim  string
	user any // string or int64
}

func lookupGlobalDictionary(ctx context.Context, env *Env) error {
	seed := scenarioSeed()
	if err := globalDictionary(ctx, env, seed); err != nil {
		return fmt.Errorf("%w (seed %d: rerun with CONFORMANCE_SEED=%d)", err, seed, seed)
	}
	return nil
}

// dictionary is one dictionary table and the ids its lookups returned.
type dictionary struct {
	t    *pkTable
	key  string
	lk   *lookuper
	ids  map[any]int64 // key → id, as first returned
	kind string        // "str" or "bigint", the uv key suffix
}

// mapKeys looks keys up with insert-if-not-exists (duplicates included, as
// the stream has them) and returns each key's id, checking that every key
// has exactly one row, with its own key, and an id that never changes.
func (d *dictionary) mapKeys(keys []any) (map[any]int64, error) {
	rows := make([][]any, len(keys))
	for i, k := range keys {
		rows[i] = []any{k}
	}
	got, err := d.lk.lookup(rows)
	if err != nil {
		return nil, err
	}
	if len(got) != len(keys) {
		return nil, fmt.Errorf("%s of %d keys: %d rows; want one row per key (insert-if-not-exists returns absent keys too)", d.lk.what, len(keys), len(got))
	}
	out := map[any]int64{}
	for i, r := range got {
		if r.key != i {
			return nil, fmt.Errorf("%s: row %d is for key %d; want one row per key, in key order", d.lk.what, i, r.key)
		}
		if r.row[0] != keys[i] {
			return nil, fmt.Errorf("%s: the row of key %d (%s) is %s", d.lk.what, i, fmtValue(keys[i]), fmtRow(r.row))
		}
		id, ok := r.row[1].(int64)
		if !ok {
			return nil, fmt.Errorf("%s: key %s has id %s; want an INT assigned by the server", d.lk.what, fmtValue(keys[i]), fmtValue(r.row[1]))
		}
		if prev, seen := d.ids[keys[i]]; seen && prev != id {
			return nil, fmt.Errorf("%s: key %s has id %d, earlier it had %d; a key's id never changes", d.lk.what, fmtValue(keys[i]), id, prev)
		}
		if prev, seen := out[keys[i]]; seen && prev != id {
			return nil, fmt.Errorf("%s: key %s appears twice in one batch with ids %d and %d", d.lk.what, fmtValue(keys[i]), prev, id)
		}
		d.ids[keys[i]] = id
		out[keys[i]] = id
	}
	return out, nil
}

func globalDictionary(ctx context.Context, env *Env, seed int64) error {
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	dictSpec := func(name, key, keyType string) client.TableSpec {
		return client.TableSpec{
			Table:      env.Table(name),
			Columns:    []client.Column{{Name: key, Type: keyType}, {Name: "uid_int32", Type: "INT"}},
			PrimaryKey: []string{key},
			Options:    map[string]string{"bucket.num": "3", "auto-increment.fields": "uid_int32"},
		}
	}
	var dicts []*dictionary
	for _, d := range []struct{ name, key, typ, kind string }{
		{"dim_mapping", "dim_b", "STRING", "str"},
		{"dim_mapping_bigint", "uid", "BIGINT", "bigint"},
	} {
		t, _, err := createPK(ctx, env, dictSpec(d.name, d.key, d.typ))
		if err != nil {
			return err
		}
		lk, err := openLookup(ctx, env, t, client.LookupRequest{Table: t.name, InsertIfNotExists: true}, t.fields([]string{d.key}))
		if err != nil {
			return err
		}
		defer lk.l.Close()
		dicts = append(dicts, &dictionary{t: t, key: d.key, lk: lk, ids: map[any]int64{}, kind: d.kind})
	}
	uv, _, err := createPK(ctx, env, client.TableSpec{
		Table:      env.Table("uv"),
		Columns:    []client.Column{{Name: "dim", Type: "STRING"}, {Name: "users", Type: "BYTES"}},
		PrimaryKey: []string{"dim"},
		Options:    map[string]string{"bucket.num": "2", "table.merge-engine": "aggregation", "fields.users.agg": "rbm32"},
	})
	if err != nil {
		return err
	}
	w, err := env.Client.NewWriter(ctx, client.WriteRequest{Table: uv.name})
	if err != nil {
		return err
	}
	defer w.Close()

	// The exact answer: the distinct users of each dimension, per kind.
	exact := map[string]map[any]bool{} // "<dim>|<kind>" → users
	for b := range dictBatches {
		events := make([]dictEvent, dictEvents)
		for i := range events {
			e := dictEvent{dim: "d" + strconv.Itoa(rng.IntN(dictDims))}
			// Skewed: low user ids are frequent, so batches repeat keys.
			n := rng.IntN(1 + rng.IntN(dictUserRange))
			if rng.IntN(2) == 0 {
				e.user = "u-" + strconv.Itoa(n)
			} else {
				e.user = int64(n)
			}
			events[i] = e
		}
		var strs, ints []any
		for _, e := range events {
			kind := "bigint"
			if _, ok := e.user.(string); ok {
				kind = "str"
				strs = append(strs, e.user)
			} else {
				ints = append(ints, e.user)
			}
			k := e.dim + "|" + kind
			if exact[k] == nil {
				exact[k] = map[any]bool{}
			}
			exact[k][e.user] = true
		}
		mapped := make([]map[any]int64, 2)
		for i, keys := range [][]any{strs, ints} {
			if mapped[i], err = dicts[i].mapKeys(keys); err != nil {
				return fmt.Errorf("batch %d: %w", b, err)
			}
		}
		// One bitmap per (dimension, kind) of this batch, aggregated by the table.
		bitmaps := map[string]*roaring.Bitmap{}
		for _, e := range events {
			kind, i := "bigint", 1
			if _, ok := e.user.(string); ok {
				kind, i = "str", 0
			}
			k := e.dim + "|" + kind
			if bitmaps[k] == nil {
				bitmaps[k] = roaring.New()
			}
			bitmaps[k].Add(uint32(mapped[i][e.user]))
		}
		var rows pkBatch
		for _, k := range slices.Sorted(maps.Keys(bitmaps)) {
			data, err := bitmaps[k].ToBytes()
			if err != nil {
				return err
			}
			rows = append(rows, []any{k, bin(data)})
		}
		rec, err := buildRecord(env.Mem, uv.schema.Fields(), rows)
		if err != nil {
			return err
		}
		err = w.Send(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("batch %d: write %s: %w", b, uv.name, err)
		}
	}
	if _, err := w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", uv.name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", uv.name, err)
	}

	// Each dictionary: ids 1..N, as the lookups returned them, each key
	// inserted once; a plain lookup and a second insert-if-not-exists return
	// the same ids.
	for _, d := range dicts {
		if err := d.lk.close(); err != nil {
			return err
		}
		byKey := map[int64]int64{}
		i := int64(0)
		for _, id := range d.ids {
			byKey[i] = id
			i++
		}
		if err := denseFrom(fmt.Sprintf("%s after %d insert-if-not-exists lookups by one writer", d.t.name, dictBatches), byKey, 1); err != nil {
			return err
		}
		want := pkState{}
		for k, id := range d.ids {
			r := []any{k, id}
			want[d.t.keyOf(r)] = r
		}
		cl, err := checkConsistent(ctx, env, d.t, true, want, "after the stream was mapped")
		if err != nil {
			return err
		}
		if kinds := cl.kinds(); kinds[ctInsert] != len(d.ids) || len(kinds) != 1 {
			return fmt.Errorf("%s: change types %v; want exactly one insert per key (%d keys) and nothing else", d.t.changelog(), kinds, len(d.ids))
		}
		keys := slices.Collect(maps.Keys(d.ids))
		rows := make([][]any, len(keys))
		for i, k := range keys {
			rows[i] = []any{k}
		}
		for _, insert := range []bool{false, true} {
			req := client.LookupRequest{Table: d.t.name, InsertIfNotExists: insert, Columns: []string{"uid_int32"}}
			got, err := lookupOnce(ctx, env, d.t, req, d.t.fields([]string{d.key}), rows)
			if err != nil {
				return err
			}
			if len(got) != len(keys) {
				return fmt.Errorf("%s of all %d keys: %d rows", describeLookup(req), len(keys), len(got))
			}
			for _, r := range got {
				if r.row[0] != d.ids[keys[r.key]] {
					return fmt.Errorf("%s: key %s has id %s, it was given %d", describeLookup(req), fmtValue(keys[r.key]), fmtValue(r.row[0]), d.ids[keys[r.key]])
				}
			}
		}
	}

	// The counts: each (dimension, kind) bitmap holds exactly the ids of its
	// users, so its cardinality is the exact distinct count, and so is the
	// sum per dimension.
	state, _, err := readSnapshot(ctx, env, uv)
	if err != nil {
		return err
	}
	if len(state) != len(exact) {
		return fmt.Errorf("%s has %d rows, want %d (one per dimension and kind)", uv.name, len(state), len(exact))
	}
	perDim := map[string][2]uint64{} // dim → (counted, exact)
	for k, users := range exact {
		dim, kind, _ := strings.Cut(k, "|")
		d := dicts[0]
		if kind == dicts[1].kind {
			d = dicts[1]
		}
		ids := map[uint32]bool{}
		for u := range users {
			ids[uint32(d.ids[u])] = true
		}
		r := state[fmtValue(k)]
		if r == nil {
			return fmt.Errorf("%s has no row for %q", uv.name, k)
		}
		if diff := diffUsers(r[1], ids); diff != "" {
			return fmt.Errorf("%s, dimension %s, %s users: %s", uv.name, dim, kind, diff)
		}
		bm := roaring.New()
		if err := bm.UnmarshalBinary([]byte(r[1].(bin))); err != nil {
			return err
		}
		c := perDim[dim]
		c[0] += bm.GetCardinality()
		c[1] += uint64(len(users))
		perDim[dim] = c
	}
	for dim, c := range perDim {
		if c[0] != c[1] {
			return fmt.Errorf("dimension %s: %d distinct users counted, %d exactly", dim, c[0], c[1])
		}
	}
	return nil
}
