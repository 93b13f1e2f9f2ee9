package conformance

// lookup-delta-join: the lookup-driven join of FLIP-486 (Fluss's delta join) over two CDC tables without deletes. Writers upsert a fact table and
// a dimension table in interleaved random batches while a driver follows
// both $changelog views; for a fact change it point-looks-up the dimension
// by dim_a, for a dimension change it prefix-looks-up the facts by dim_a
// (the fact table's prefix index, PROTOCOL.md §6.2), and upserts the joined
// rows into a sink keyed like the facts. Once both streams reach the tables'
// final offsets the sink must be the inner join of the two final tables.
// That needs lookups that see everything the streams have shown; the
// redundant outputs of changes that saw each other (the ΔA⋈ΔB term) are
// counted and reported, not failed.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fluxgate-io/fluxgate/client"
)

const (
	djFactBatches = 30
	djDimBatches  = 20
	djDimA        = 25 // facts have dim_a 0..24
	djDimB        = 12
	djDimFrom     = 5 // dimensions have dim_a 5..29: some facts never join, some dimensions have no facts
	djDimTo       = 30
	// djCatchUp is how long the driver may take to reach the end offsets
	// once the writers are done.
	djCatchUp = 15 * time.Second
)

func lookupDeltaJoin(ctx context.Context, env *Env) error {
	seed := scenarioSeed()
	if err := deltaJoin(ctx, env, seed); err != nil {
		return fmt.Errorf("%w (seed %d: rerun with CONFORMANCE_SEED=%d)", err, seed, seed)
	}
	return nil
}

// djBatch is one batch of a followed $changelog: its rows (table columns)
// of kind insert or update_after, and where the bucket goes on from.
type djBatch struct {
	side int // 0 facts, 1 dimensions
	meta client.BatchMeta
	rows [][]any
	err  error
}

// djFollow reads t's $changelog from the earliest offset, unbounded, and
// passes every batch on until ctx ends.
func djFollow(ctx context.Context, env *Env, t *pkTable, side int, out chan<- djBatch) {
	send := func(b djBatch) {
		select {
		case out <- b:
		case <-ctx.Done():
		}
	}
	s, err := env.Client.Scan(ctx, client.ScanRequest{Table: t.changelog(), Startup: client.Earliest, Stop: client.Unbounded})
	if err != nil {
		send(djBatch{side: side, err: fmt.Errorf("follow %s: %w", t.changelog(), err)})
		return
	}
	defer s.Release()
	cl, err := newChangelog(t, s.Schema())
	if err != nil {
		send(djBatch{side: side, err: err})
		return
	}
	for s.Next() {
		rec := s.RecordBatch()
		b := djBatch{side: side, meta: s.Meta()}
		for i := range int(rec.NumRows()) {
			kind := cell(rec.Column(cl.kindCol), i)
			switch kind {
			case ctUpdateBefore:
				continue // the new row comes as update_after
			case ctInsert, ctUpdateAfter:
			default:
				b.err = fmt.Errorf("follow %s: bucket %d: a %v row in a table with table.delete.behavior=ignore", t.changelog(), b.meta.Bucket, kind)
			}
			r := make([]any, len(cl.cols))
			for j, c := range cl.cols {
				r[j] = cell(rec.Column(c), i)
			}
			b.rows = append(b.rows, r)
		}
		send(b)
		if b.err != nil {
			return
		}
	}
	if err := s.Err(); err != nil && ctx.Err() == nil {
		send(djBatch{side: side, err: fmt.Errorf("follow %s: %w", t.changelog(), err)})
	}
}

// djStats is what the driver did.
type djStats struct {
	changes   [2]int // rows of the fact and dimension streams
	outputs   int    // joined rows written to the sink
	redundant int    // outputs equal to the sink's row for their key at the time
}

func deltaJoin(ctx context.Context, env *Env, seed int64) error {
	rng := rand.New(rand.NewPCG(uint64(seed), 13))
	ignore := map[string]string{"table.delete.behavior": "ignore"}
	withOpts := func(o map[string]string) map[string]string {
		for k, v := range ignore {
			o[k] = v
		}
		return o
	}
	fact, _, err := createPK(ctx, env, client.TableSpec{
		Table: env.Table("fact_cdc"),
		Columns: []client.Column{{Name: "dim_a", Type: "BIGINT"}, {Name: "dim_b", Type: "BIGINT"},
			{Name: "metric", Type: "BIGINT"}, {Name: "ts", Type: "BIGINT"}},
		PrimaryKey: []string{"dim_a", "dim_b"},
		Options:    withOpts(map[string]string{"bucket.key": "dim_a", "bucket.num": "3"}),
	})
	if err != nil {
		return err
	}
	if err := checkIndexes(ctx, env, fact.name, []client.Index{{Name: "primary_key", Columns: []string{"dim_a", "dim_b"}},
		{Name: "prefix", Columns: []string{"dim_a"}}}); err != nil {
		return err
	}
	dim, _, err := createPK(ctx, env, client.TableSpec{
		Table:      env.Table("dim_cdc"),
		Columns:    []client.Column{{Name: "dim_a", Type: "BIGINT"}, {Name: "attr", Type: "STRING"}, {Name: "ts", Type: "BIGINT"}},
		PrimaryKey: []string{"dim_a"},
		Options:    withOpts(map[string]string{"bucket.num": "2"}),
	})
	if err != nil {
		return err
	}
	sink, _, err := createPK(ctx, env, client.TableSpec{
		Table: env.Table("dj_sink"),
		Columns: []client.Column{{Name: "dim_a", Type: "BIGINT"}, {Name: "dim_b", Type: "BIGINT"},
			{Name: "metric", Type: "BIGINT"}, {Name: "attr", Type: "STRING"}},
		PrimaryKey: []string{"dim_a", "dim_b"},
		Options:    map[string]string{"bucket.num": "2"},
	})
	if err != nil {
		return err
	}

	// The writers' input, made up front so that the seed replays it.
	var ts atomic.Int64
	factBatches := make([]pkBatch, djFactBatches)
	for i := range factBatches {
		seen := map[[2]int64]bool{}
		for range 1 + rng.IntN(15) {
			k := [2]int64{int64(rng.IntN(djDimA)), int64(rng.IntN(djDimB))}
			if !seen[k] {
				seen[k] = true
				factBatches[i] = append(factBatches[i], []any{k[0], k[1], int64(rng.IntN(1000)), nil})
			}
		}
	}
	dimBatches := make([]pkBatch, djDimBatches)
	for i := range dimBatches {
		seen := map[int64]bool{}
		for range 1 + rng.IntN(6) {
			a := int64(djDimFrom + rng.IntN(djDimTo-djDimFrom))
			if !seen[a] {
				seen[a] = true
				dimBatches[i] = append(dimBatches[i], []any{a, nil, nil})
			}
		}
	}
	pauses := make([]time.Duration, djFactBatches+djDimBatches)
	for i := range pauses {
		pauses[i] = time.Duration(rng.IntN(3000)) * time.Microsecond
	}

	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan djBatch, 64)
	var followers sync.WaitGroup
	for side, t := range []*pkTable{fact, dim} {
		followers.Add(1)
		go func() {
			defer followers.Done()
			djFollow(dctx, env, t, side, events)
		}()
	}
	defer func() {
		cancel()
		followers.Wait()
	}()

	// The writers: every upsert carries a new ts, so every write changes its
	// row (no empty changelog batches to wait for).
	ends := make(chan [2]map[int]int64, 1)
	writeErr := make(chan error, 1)
	go func() {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for side, spec := range []struct {
			t       *pkTable
			batches []pkBatch
			pause   []time.Duration
		}{{fact, factBatches, pauses[:djFactBatches]}, {dim, dimBatches, pauses[djFactBatches:]}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[side] = djWrite(dctx, env, spec.t, spec.batches, spec.pause, &ts)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			writeErr <- err
			return
		}
		var e [2]map[int]int64
		for side, t := range []*pkTable{fact, dim} {
			offs, err := env.Client.ListOffsets(dctx, t.name, client.Latest, nil)
			if err != nil {
				writeErr <- err
				return
			}
			e[side] = offs
		}
		ends <- e
	}()

	stats, err := djDrive(dctx, env, fact, dim, sink, events, ends, writeErr)
	if err != nil {
		return err
	}

	// The sink is the inner join of the final tables.
	facts, _, err := readSnapshot(ctx, env, fact)
	if err != nil {
		return err
	}
	dims, _, err := readSnapshot(ctx, env, dim)
	if err != nil {
		return err
	}
	join := pkState{}
	for _, f := range facts {
		for _, d := range dims {
			if f[0] == d[0] {
				r := []any{f[0], f[1], f[2], d[1]}
				join[sink.keyOf(r)] = r
			}
		}
	}
	got, _, err := readSnapshot(ctx, env, sink)
	if err != nil {
		return err
	}
	if err := equalStates(fmt.Sprintf("%s, written by the delta join (vs the inner join of the final %s and %s)", sink.name, fact.name, dim.name), got, join); err != nil {
		return err
	}
	if len(join) == 0 {
		return fmt.Errorf("conformance: the join is empty; the scenario checks nothing")
	}
	fmt.Fprintf(scenarioLog, "lookup-delta-join: %d fact and %d dimension changes gave %d outputs for a join of %d rows; %d outputs beyond the join's rows, %d of them duplicates (the sink's row again, from changes that saw each other: the ΔA⋈ΔB term)\n",
		stats.changes[0], stats.changes[1], stats.outputs, len(join), stats.outputs-len(join), stats.redundant)
	return nil
}

// djWrite upserts the batches of one table, each with new ts values.
func djWrite(ctx context.Context, env *Env, t *pkTable, batches []pkBatch, pauses []time.Duration, ts *atomic.Int64) error {
	w, err := env.Client.NewWriter(ctx, client.WriteRequest{Table: t.name})
	if err != nil {
		return err
	}
	for i, rows := range batches {
		for _, r := range rows {
			n := ts.Add(1)
			r[len(r)-1] = n
			if len(r) == 3 { // a dimension: (dim_a, attr, ts)
				r[1] = "attr-" + strconv.FormatInt(n, 10)
			}
		}
		rec, err := buildRecord(env.Mem, t.schema.Fields(), rows)
		if err != nil {
			w.Close()
			return err
		}
		_, err = w.Write(rec)
		rec.Release()
		if err != nil {
			w.Close()
			return fmt.Errorf("write %s, batch %d: %w", t.name, i, err)
		}
		time.Sleep(pauses[i])
	}
	return w.Close()
}

// djDrive runs the join until both streams have reached the end offsets the
// writers report, and flushes the sink.
func djDrive(ctx context.Context, env *Env, fact, dim, sink *pkTable, events <-chan djBatch, endsCh <-chan [2]map[int]int64, writeErr <-chan error) (djStats, error) {
	var st djStats
	dimLk, err := openLookup(ctx, env, dim, client.LookupRequest{Table: dim.name, Columns: []string{"attr"}}, dim.fields([]string{"dim_a"}))
	if err != nil {
		return st, err
	}
	defer dimLk.l.Close()
	factLk, err := openLookup(ctx, env, fact, client.LookupRequest{Table: fact.name, Prefix: true, Columns: []string{"dim_b", "metric"}}, fact.fields([]string{"dim_a"}))
	if err != nil {
		return st, err
	}
	defer factLk.l.Close()
	w, err := env.Client.NewWriter(ctx, client.WriteRequest{Table: sink.name})
	if err != nil {
		return st, err
	}
	defer w.Close()
	written := pkState{} // what the driver wrote to the sink, key by key

	emit := func(rows [][]any) error {
		if len(rows) == 0 {
			return nil
		}
		for _, r := range rows {
			k := sink.keyOf(r)
			if slices.Equal(written[k], r) {
				st.redundant++
			}
			written[k] = r
		}
		st.outputs += len(rows)
		rec, err := buildRecord(env.Mem, sink.schema.Fields(), rows)
		if err != nil {
			return err
		}
		defer rec.Release()
		if err := w.Send(rec); err != nil {
			return fmt.Errorf("write %s: %w", sink.name, err)
		}
		return nil
	}
	process := func(b djBatch) error {
		if len(b.rows) == 0 {
			return nil
		}
		st.changes[b.side] += len(b.rows)
		keys := make([][]any, len(b.rows))
		for i, r := range b.rows {
			keys[i] = []any{r[0]}
		}
		var out [][]any
		if b.side == 0 {
			// A fact change: its row with the dimension's current attr.
			found, err := dimLk.lookup(keys)
			if err != nil {
				return err
			}
			for _, f := range found {
				r := b.rows[f.key]
				out = append(out, []any{r[0], r[1], r[2], f.row[0]})
			}
		} else {
			// A dimension change: every current fact of its dim_a.
			found, err := factLk.lookup(keys)
			if err != nil {
				return err
			}
			for _, f := range found {
				d := b.rows[f.key]
				out = append(out, []any{d[0], f.row[0], f.row[1], d[1]})
			}
		}
		return emit(out)
	}

	var ends *[2]map[int]int64
	var deadline <-chan time.Time // set once the end offsets are known
	next := [2]map[int]int64{{}, {}}
	reached := func() bool {
		if ends == nil {
			return false
		}
		for side := range 2 {
			for b, end := range ends[side] {
				if next[side][b] < end {
					return false
				}
			}
		}
		return true
	}
	for !reached() {
		select {
		case b := <-events:
			if b.err != nil {
				return st, b.err
			}
			if err := process(b); err != nil {
				return st, err
			}
			next[b.side][b.meta.Bucket] = max(next[b.side][b.meta.Bucket], b.meta.Next)
		case e := <-endsCh:
			ends = &e
			deadline = time.After(djCatchUp)
		case <-deadline:
			return st, fmt.Errorf("the delta join did not reach the tables' end offsets (facts %v, dimensions %v) within %s of the writers' end: it read up to %v and %v; an idle unbounded $changelog stream sends next at least every 5 s",
				ends[0], ends[1], djCatchUp, next[0], next[1])
		case err := <-writeErr:
			return st, err
		case <-ctx.Done():
			return st, fmt.Errorf("the delta join did not reach the tables' end offsets (facts %v, dimensions %v; read up to %v and %v): %w",
				endsOrNil(ends, 0), endsOrNil(ends, 1), next[0], next[1], ctx.Err())
		}
	}
	if _, err := w.Flush(); err != nil {
		return st, err
	}
	if err := w.Close(); err != nil {
		return st, fmt.Errorf("write %s: %w", sink.name, err)
	}
	if err := dimLk.close(); err != nil {
		return st, err
	}
	return st, factLk.close()
}

func endsOrNil(ends *[2]map[int]int64, side int) any {
	if ends == nil {
		return "not yet known"
	}
	return ends[side]
}
