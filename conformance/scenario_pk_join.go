package conformance

// pk-partial-update-join: two writers fill disjoint columns of one
// primary-key table by partial updates (PROTOCOL.md §5 "columns", Fluss's
// partial update), concurrently and in random interleavings: the table ends as the join
// of their inputs, and its $changelog replays to it.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/fluxgate-io/fluxgate/client"
)

const (
	joinIDs      = 300 // ids 1000 .. 1000+joinIDs-1, each written by both writers
	joinMaxBatch = 40
)

func pkPartialUpdateJoin(ctx context.Context, env *Env) error {
	seed := scenarioSeed()
	if err := partialUpdateJoin(ctx, env, seed); err != nil {
		return fmt.Errorf("%w (seed %d: rerun with CONFORMANCE_SEED=%d)", err, seed, seed)
	}
	return nil
}

// joinSide is one writer's input: its columns and its rows in write order.
type joinSide struct {
	cols []string
	rows [][]any
	last map[int64][]any // each id's last row
}

// newJoinSide makes a writer's input: every id once to three times, in random
// order; only an id's last row may be the one that counts, and it is never
// NULL, so that the join has both sides of every id.
func newJoinSide(rng *rand.Rand, cols []string, value func(id int64, n int) []any) *joinSide {
	s := &joinSide{cols: cols, last: map[int64][]any{}}
	var ids []int64
	for i := range int64(joinIDs) {
		for range 1 + rng.IntN(3) {
			ids = append(ids, 1000+i)
		}
	}
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	seen := map[int64]bool{}
	s.rows = make([][]any, len(ids))
	// From the back: the first time an id is met is its last row.
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		r := value(id, i)
		if seen[id] && rng.IntN(4) == 0 {
			for c := 1; c < len(r); c++ {
				r[c] = nil // an earlier NULL, overwritten later
			}
		}
		if !seen[id] {
			s.last[id] = r
		}
		seen[id] = true
		s.rows[i] = r
	}
	return s
}

// batches cuts the rows into batches of random sizes.
func (s *joinSide) batches(rng *rand.Rand) []pkBatch {
	var out []pkBatch
	for rows := s.rows; len(rows) > 0; {
		n := min(len(rows), 1+rng.IntN(joinMaxBatch))
		out = append(out, rows[:n])
		rows = rows[n:]
	}
	return out
}

func partialUpdateJoin(ctx context.Context, env *Env, seed int64) error {
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	spec := client.TableSpec{
		Table: env.Table("fact_pk_dim_join"),
		Columns: []client.Column{
			{Name: "id", Type: "BIGINT"},
			{Name: "dim_a", Type: "STRING"},
			{Name: "dim_b", Type: "STRING"},
			{Name: "metric", Type: "BIGINT"},
		},
		PrimaryKey: []string{"id"},
		Options:    map[string]string{"bucket.num": "3"},
	}
	t, _, err := createPK(ctx, env, spec)
	if err != nil {
		return err
	}
	a := newJoinSide(rng, []string{"id", "dim_a", "metric"}, func(id int64, n int) []any {
		return []any{id, "a" + strconv.FormatInt(id, 10) + "." + strconv.Itoa(n), id*1000 + int64(n)}
	})
	b := newJoinSide(rng, []string{"id", "dim_b"}, func(id int64, n int) []any {
		return []any{id, "b" + strconv.FormatInt(id, 10) + "." + strconv.Itoa(n)}
	})
	sides := []*joinSide{a, b}
	batches := [][]pkBatch{a.batches(rng), b.batches(rng)}

	var wg sync.WaitGroup
	errs := make([]error, len(sides))
	for i, s := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := client.WriteRequest{Table: t.name, Columns: s.cols}
			if _, err := writeRows(ctx, env, t, req, s.cols, batches[i]...); err != nil {
				errs[i] = fmt.Errorf("partial-update writer of columns %v: %w", s.cols, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}

	join := pkState{}
	for id, ra := range a.last {
		rb, ok := b.last[id]
		if !ok {
			return fmt.Errorf("conformance: id %d has no dim_b row", id)
		}
		r := []any{id, ra[1], rb[1], ra[2]}
		join[t.keyOf(r)] = r
	}
	cl, err := checkConsistent(ctx, env, t, true, join, "after both partial-update writers finished")
	if err != nil {
		return err
	}
	// Nothing was deleted, and each id was inserted once, by whichever
	// writer came first, with the other side NULL.
	kinds := cl.kinds()
	if kinds[ctInsert] != joinIDs || kinds[ctDelete] != 0 || kinds[ctUpdateBefore] != kinds[ctUpdateAfter] {
		return fmt.Errorf("%s: change types %v; want %d inserts (one per id), no deletes and as many update_before as update_after rows", t.changelog(), kinds, joinIDs)
	}
	for _, rows := range cl.buckets {
		for _, c := range rows {
			if c.kind == ctInsert && (c.row[1] != nil || c.row[3] != nil) && c.row[2] != nil {
				return fmt.Errorf("%s: %s inserts both sides at once; each writer writes only its own columns", t.changelog(), c)
			}
		}
	}
	return nil
}
