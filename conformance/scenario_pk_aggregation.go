package conformance

// pk-aggregation-exactly-once: a sink into an aggregation table (sum and
// rbm32) that fails over after a checkpoint undoes what it wrote since
// (PROTOCOL.md §5.4, Fluss's FIP-21) and replays its input from the
// checkpoint: every input counts exactly once.

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/client"
)

// The sink's input: aggBatches batches of aggEvents events; the checkpoint
// is taken after batch aggCheckpoint, the sink fails after batch aggFailure.
// Keys k00..k19 appear from the start, k20..k29 only after the checkpoint.
const (
	aggBatches    = 24
	aggEvents     = 40
	aggCheckpoint = 10
	aggFailure    = 18
	aggUIDs       = 3000
)

// aggEvent is one input row: a key, an amount for sum and user ids for
// rbm32 (nil amount or users: NULL).
type aggEvent struct {
	key    string
	amount any // int64 or nil
	users  []uint32
}

func (e aggEvent) row() []any {
	r := []any{e.key, e.amount, nil}
	if e.users != nil {
		b, err := roaring.BitmapOf(e.users...).ToBytes()
		if err != nil {
			panic(err) // serializing to memory does not fail
		}
		r[2] = bin(b)
	}
	return r
}

// aggTotal is what the table must hold for a key.
type aggTotal struct {
	total any // int64 or nil
	users map[uint32]bool
}

// aggModel applies events by the rules of sum and rbm32 (Fluss's aggregate functions):
// the first row of a key is stored as it is; then NULL inputs are ignored and
// a NULL accumulator takes the input.
func aggModel(events []aggEvent) map[string]*aggTotal {
	out := map[string]*aggTotal{}
	for _, e := range events {
		k := fmtValue(e.key) // as pkTable.keyOf renders it
		t, ok := out[k]
		if !ok {
			t = &aggTotal{}
			out[k] = t
		}
		switch {
		case e.amount == nil:
		case t.total == nil:
			t.total = e.amount
		default:
			t.total = t.total.(int64) + e.amount.(int64)
		}
		if e.users != nil {
			if t.users == nil {
				t.users = map[uint32]bool{}
			}
			for _, u := range e.users {
				t.users[u] = true
			}
		}
	}
	return out
}

func pkAggregationExactlyOnce(ctx context.Context, env *Env) error {
	seed := scenarioSeed()
	if err := aggregationExactlyOnce(ctx, env, seed); err != nil {
		return fmt.Errorf("%w (seed %d: rerun with CONFORMANCE_SEED=%d)", err, seed, seed)
	}
	return nil
}

func aggregationExactlyOnce(ctx context.Context, env *Env, seed int64) error {
	rng := rand.New(rand.NewPCG(uint64(seed), 2))
	spec := client.TableSpec{
		Table: env.Table("agg_exactly_once"),
		Columns: []client.Column{
			{Name: "k", Type: "STRING"},
			{Name: "total", Type: "BIGINT"},
			{Name: "users", Type: "BYTES"},
		},
		PrimaryKey: []string{"k"},
		Options: map[string]string{
			"bucket.num": "3", "table.merge-engine": "aggregation",
			"fields.total.agg": "sum", "fields.users.agg": "rbm32",
		},
	}
	t, info, err := createPK(ctx, env, spec)
	if err != nil {
		return err
	}
	for k, v := range map[string]string{"table.delete.behavior": "ignore", "table.changelog.image": "full", "fields.total.agg": "sum", "fields.users.agg": "rbm32"} {
		if info.Options[k] != v {
			return fmt.Errorf("create-table %s: TableInfo option %s = %q, want %q (PROTOCOL.md §3)", t.name, k, info.Options[k], v)
		}
	}

	batches := make([][]aggEvent, aggBatches)
	for i := range batches {
		keys := 20
		if i >= aggCheckpoint {
			keys = 30
		}
		for range aggEvents {
			e := aggEvent{key: fmt.Sprintf("k%02d", rng.IntN(keys))}
			if rng.IntN(20) != 0 {
				e.amount = int64(1 + rng.IntN(1000))
			}
			if rng.IntN(20) != 0 {
				for range 1 + rng.IntN(3) {
					e.users = append(e.users, uint32(rng.IntN(aggUIDs)))
				}
			}
			batches[i] = append(batches[i], e)
		}
	}
	events := func(from, to int) []aggEvent { return slices.Concat(batches[from:to]...) }

	// Up to the checkpoint: the sink keeps the end offsets its writes were
	// acknowledged with.
	res, err := sinkWrite(ctx, env, t, batches[:aggCheckpoint])
	if err != nil {
		return fmt.Errorf("sink, batches 0..%d: %w", aggCheckpoint-1, err)
	}
	checkpoint := map[int]int64{}
	for b := range 3 {
		checkpoint[b] = 0 // a bucket no write touched: its baseline is 0
	}
	maps.Copy(checkpoint, endOffsets(res...))
	atCheckpoint, _, err := readSnapshot(ctx, env, t)
	if err != nil {
		return err
	}
	if err := equalAgg("the table at the checkpoint", atCheckpoint, aggModel(events(0, aggCheckpoint))); err != nil {
		return err
	}

	// After the checkpoint the sink writes on, then fails: everything since
	// the checkpoint is forgotten by the sink, but applied in the table.
	if _, err := sinkWrite(ctx, env, t, batches[aggCheckpoint:aggFailure]); err != nil {
		return fmt.Errorf("sink, batches %d..%d: %w", aggCheckpoint, aggFailure-1, err)
	}
	before, err := env.Client.ListOffsets(ctx, t.name, client.Latest, nil)
	if err != nil {
		return err
	}

	// Recovery: undo to the checkpoint.
	undo, err := env.Client.Undo(ctx, t.name, checkpoint)
	if err != nil {
		return fmt.Errorf("undo to the checkpoint %v: %w", checkpoint, err)
	}
	changed := map[string]bool{}
	for _, e := range events(aggCheckpoint, aggFailure) {
		changed[e.key] = true
	}
	if undo.UndoneKeys != int64(len(changed)) {
		return fmt.Errorf("undo of %s to %v: undone_keys %d, want %d (the keys written since the checkpoint: %v)", t.name, checkpoint, undo.UndoneKeys, len(changed), slices.Sorted(maps.Keys(changed)))
	}
	after, err := env.Client.ListOffsets(ctx, t.name, client.Latest, nil)
	if err != nil {
		return err
	}
	if err := equalOffsets(fmt.Sprintf("undo of %s: the reply's offsets (vs list-offsets latest after it)", t.name), undo.Offsets, after); err != nil {
		return err
	}
	for b, end := range before {
		if after[b] < end {
			return fmt.Errorf("undo of %s: bucket %d ends at %d after the undo, before it at %d; the undo must be appended to the changelog", t.name, b, after[b], end)
		}
	}
	undone, _, err := readSnapshot(ctx, env, t)
	if err != nil {
		return err
	}
	if err := equalStates(fmt.Sprintf("the table after undo to %v (vs its rows at the checkpoint)", checkpoint), undone, atCheckpoint); err != nil {
		return err
	}
	// An undo to where the table is changes nothing.
	noop, err := env.Client.Undo(ctx, t.name, after)
	if err != nil {
		return fmt.Errorf("undo to the current end offsets %v: %w", after, err)
	}
	if noop.UndoneKeys != 0 {
		return fmt.Errorf("undo of %s to its current end offsets %v: undone_keys %d, want 0", t.name, after, noop.UndoneKeys)
	}
	if err := equalOffsets("undo to the current end offsets: the reply's offsets", noop.Offsets, after); err != nil {
		return err
	}

	// The sink replays its input from the checkpoint and finishes.
	if _, err := sinkWrite(ctx, env, t, batches[aggCheckpoint:]); err != nil {
		return fmt.Errorf("sink after recovery, batches %d..%d: %w", aggCheckpoint, aggBatches-1, err)
	}
	final, err := checkConsistent(ctx, env, t, true, nil, "after the sink finished")
	if err != nil {
		return err
	}
	got, err := final.replay(true)
	if err != nil {
		return err
	}
	return equalAgg("the table after the sink finished (each input counted once)", got, aggModel(events(0, aggBatches)))
}

// sinkWrite writes the batches through one stream, pipelined, and returns
// their acknowledgements.
func sinkWrite(ctx context.Context, env *Env, t *pkTable, batches [][]aggEvent) ([]client.PutResult, error) {
	fields := t.fields([]string{"k", "total", "users"})
	w, err := env.Client.NewWriter(ctx, client.WriteRequest{Table: t.name})
	if err != nil {
		return nil, err
	}
	for i, events := range batches {
		rows := make([][]any, len(events))
		for j, e := range events {
			rows[j] = e.row()
		}
		rec, err := buildRecord(env.Mem, fields, rows)
		if err != nil {
			w.Close()
			return nil, err
		}
		err = sendOne(w, rec)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("batch %d: %w", i, err)
		}
	}
	res, err := w.Flush()
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return res, err
}

func sendOne(w *client.Writer, rec arrow.RecordBatch) error {
	defer rec.Release()
	return w.Send(rec)
}

// equalAgg checks the aggregation table's rows against the model: the sum
// and the set of users (the rbm32 bitmap decoded) of every key.
func equalAgg(what string, got pkState, want map[string]*aggTotal) error {
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		r, ok := got[k]
		w := want[k]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("key %s is missing", k))
			continue
		}
		if r[1] != w.total {
			diffs = append(diffs, fmt.Sprintf("key %s: total %s, want %s", k, fmtValue(r[1]), fmtValue(w.total)))
		}
		if d := diffUsers(r[2], w.users); d != "" {
			diffs = append(diffs, fmt.Sprintf("key %s: users %s", k, d))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("key %s should not be there: %s", k, fmtRow(got[k])))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	if len(diffs) > 6 {
		diffs = append(diffs[:6], fmt.Sprintf("and %d more", len(diffs)-6))
	}
	return fmt.Errorf("%s: %s", what, strings.Join(diffs, "; "))
}

// diffUsers compares a stored rbm32 value with the set of user ids it must
// hold; "" when they agree.
func diffUsers(v any, want map[uint32]bool) string {
	if v == nil || want == nil {
		if v == nil && want == nil {
			return ""
		}
		return fmt.Sprintf("%s, want %d ids", fmtValue(v), len(want))
	}
	b, ok := v.(bin)
	if !ok {
		return fmt.Sprintf("%s is not BYTES", fmtValue(v))
	}
	bm := roaring.New()
	if err := bm.UnmarshalBinary([]byte(b)); err != nil {
		return fmt.Sprintf("%s is not a portable 32-bit RoaringBitmap: %v", fmtValue(v), err)
	}
	var missing, extra []uint32
	for u := range want {
		if !bm.Contains(u) {
			missing = append(missing, u)
		}
	}
	for _, u := range bm.ToArray() {
		if !want[u] {
			extra = append(extra, u)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	slices.Sort(missing)
	return fmt.Sprintf("cardinality %d, want %d (missing %v, extra %v)", bm.GetCardinality(), len(want), abbrevU(missing), abbrevU(extra))
}

func abbrevU(xs []uint32) string {
	if len(xs) <= 8 {
		return fmt.Sprint(xs)
	}
	return fmt.Sprintf("%v ... (%d in all)", xs[:8], len(xs))
}
