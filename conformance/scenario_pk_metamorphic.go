package conformance

// pk-metamorphic and pk-metamorphic-restart: a seeded random sequence of
// upserts, deletes, partial updates, partial deletes and changelog writes on
// a small key space, checked against a model that applies Fluss's rules
// (Fluss's changelog rules): the plain-name snapshot, the $changelog
// offset by offset, its replay, and the "full" changelog read (snapshot as
// inserts, then the changes, also while following) must all agree with the
// model, and again after a restart.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
)

// scenarioSeed is the seed of a randomized scenario: $CONFORMANCE_SEED when
// set, so that a failure can be replayed, else the clock.
func scenarioSeed() int64 {
	if s, err := strconv.ParseInt(os.Getenv("CONFORMANCE_SEED"), 10, 64); err == nil {
		return s
	}
	return time.Now().UnixNano()
}

const metaKeys = 12 // keys 0..11, so that writes collide

var metaColumns = []client.Column{
	{Name: "k", Type: "BIGINT"},
	{Name: "a", Type: "STRING"},
	{Name: "b", Type: "BIGINT"},
	{Name: "c", Type: "DOUBLE"},
}

// metaOp is one kind of write: its request, the batch's columns, and what
// the model does with each row.
type metaOp struct {
	name   string
	mode   client.WriteMode
	target []string // the request's columns; nil: the whole row
	cols   []string // the batch's columns, in batch order
	weight int
}

var metaOps = []metaOp{
	{name: "upsert", cols: []string{"k", "a", "b", "c"}, weight: 6},
	{name: "upsert-all-columns", mode: client.ModeUpsert, target: []string{"k", "a", "b", "c"}, cols: []string{"k", "a", "b", "c"}, weight: 2},
	{name: "partial-a", target: []string{"k", "a"}, cols: []string{"k", "a"}, weight: 3},
	{name: "partial-bc", target: []string{"k", "b", "c"}, cols: []string{"k", "b", "c"}, weight: 3},
	{name: "partial-ca-reordered", mode: client.ModeUpsert, target: []string{"k", "c", "a"}, cols: []string{"c", "k", "a"}, weight: 2},
	{name: "partial-key-only", target: []string{"k"}, cols: []string{"k"}, weight: 1},
	{name: "delete", mode: client.ModeDelete, cols: []string{"k"}, weight: 2},
	{name: "delete-with-values", mode: client.ModeDelete, cols: []string{"k", "a", "b", "c"}, weight: 1},
	{name: "partial-delete-a", mode: client.ModeDelete, target: []string{"k", "a"}, cols: []string{"k", "a"}, weight: 2},
	{name: "partial-delete-bc-key-only-batch", mode: client.ModeDelete, target: []string{"k", "b", "c"}, cols: []string{"k"}, weight: 1},
	{name: "changelog", mode: client.ModeChangelog, cols: []string{changeTypeCol, "k", "a", "b", "c"}, weight: 2},
}

func (o metaOp) request(table string) client.WriteRequest {
	return client.WriteRequest{Table: table, Mode: o.mode, Columns: o.target}
}

func (o metaOp) String() string {
	return fmt.Sprintf("%s (mode %q, columns %v, batch columns %v)", o.name, o.mode, o.target, o.cols)
}

// metaModel is the table as Fluss's rules make it: rows, and per bucket the
// changelog and end offset.
type metaModel struct {
	t        *pkTable
	rows     pkState
	bucketOf map[int64]int
	buckets  int
	ends     map[int]int64
	log      map[int][]string
}

func newMetaModel(t *pkTable, buckets int, bucketOf map[int64]int) *metaModel {
	m := &metaModel{t: t, rows: pkState{}, bucketOf: bucketOf, buckets: buckets, ends: map[int]int64{}, log: map[int][]string{}}
	for b := range buckets {
		m.ends[b] = 0
	}
	return m
}

// apply runs one batch through the model and returns the end offsets its
// PutResult must carry: one per bucket it touches, advanced by the bucket's
// changes or, when there are none, by one.
func (m *metaModel) apply(op metaOp, rows pkBatch) map[int]int64 {
	n := m.t.schema.NumFields()
	inTarget := make([]bool, n)
	if op.target == nil {
		for c := range inTarget {
			inTarget[c] = true
		}
	}
	for _, c := range op.target {
		inTarget[m.t.col(c)] = true
	}
	whole := !slices.Contains(inTarget, false)
	pkOnly := len(op.target) == 1
	changes := map[int][]change{}
	for _, r := range rows {
		in := make([]any, n)
		kind := ""
		for j, c := range op.cols {
			if c == changeTypeCol {
				kind = r[j].(string)
				continue
			}
			in[m.t.col(c)] = r[j]
		}
		key := in[0].(int64)
		b := m.bucketOf[key]
		if _, ok := changes[b]; !ok {
			changes[b] = []change{}
		}
		del := op.mode == client.ModeDelete || kind == ctDelete
		if kind == ctUpdateBefore {
			continue
		}
		k := m.t.keyOf(in)
		old := m.rows[k]
		emit := func(kind string, row []any) { changes[b] = append(changes[b], change{kind: kind, row: row}) }
		// A partial delete keeps a row that has a value in a column it does
		// not write (the key, column 0, always being written).
		keeps := false
		for c := 1; c < n && del && !whole && old != nil; c++ {
			keeps = keeps || (!inTarget[c] && old[c] != nil)
		}
		switch {
		case del && old == nil:
		case keeps:
			// It nulls the columns it writes instead.
			nw := slices.Clone(old)
			for c := 1; c < n; c++ {
				if inTarget[c] {
					nw[c] = nil
				}
			}
			emit(ctUpdateBefore, old)
			emit(ctUpdateAfter, nw)
			m.rows[k] = nw
		case del:
			emit(ctDelete, old)
			delete(m.rows, k)
		case old == nil:
			for c := range n {
				if !inTarget[c] {
					in[c] = nil
				}
			}
			emit(ctInsert, in)
			m.rows[k] = in
		case pkOnly:
			// Only the key written to a present key: no change at all.
		default:
			nw := slices.Clone(old)
			for c := range n {
				if inTarget[c] {
					nw[c] = in[c]
				}
			}
			emit(ctUpdateBefore, old)
			emit(ctUpdateAfter, nw)
			m.rows[k] = nw
		}
	}
	ends := map[int]int64{}
	for b, cs := range changes {
		if len(cs) == 0 {
			m.ends[b]++
		}
		for _, c := range cs {
			c.offset = m.ends[b]
			m.ends[b]++
			m.log[b] = append(m.log[b], c.String())
		}
		ends[b] = m.ends[b]
	}
	return ends
}

// metaRows makes a random batch for op.
func metaRows(rng *rand.Rand, op metaOp) pkBatch {
	a := []any{nil, "x", "y", "z"}
	b := []any{nil, int64(1), int64(2), int64(3)}
	c := []any{nil, 0.5, 1.5}
	value := func(col string, key int64) any {
		switch col {
		case "k":
			return key
		case "a":
			return a[rng.IntN(len(a))]
		case "b":
			return b[rng.IntN(len(b))]
		case "c":
			return c[rng.IntN(len(c))]
		}
		panic("conformance: no column " + col)
	}
	var rows pkBatch
	for range 1 + rng.IntN(10) {
		key := int64(rng.IntN(metaKeys))
		if op.mode != client.ModeChangelog {
			r := make([]any, len(op.cols))
			for j, col := range op.cols {
				r[j] = value(col, key)
			}
			rows = append(rows, r)
			continue
		}
		row := func(kind string) []any {
			return []any{kind, key, value("a", key), value("b", key), value("c", key)}
		}
		// A changelog as an upstream writes it: update_before then update_after.
		switch rng.IntN(4) {
		case 0:
			rows = append(rows, row(ctInsert))
		case 1:
			rows = append(rows, row(ctUpdateBefore), row(ctUpdateAfter))
		case 2:
			rows = append(rows, row(ctUpdateAfter))
		default:
			rows = append(rows, row(ctDelete))
		}
	}
	return rows
}

// metaRun writes n random batches, each acknowledged before the next, through
// one open stream per kind of write, and checks each PutResult against the
// model.
func metaRun(ctx context.Context, env *Env, m *metaModel, rng *rand.Rand, n int) error {
	writers := map[string]*client.Writer{}
	defer func() {
		for _, w := range writers {
			w.Close()
		}
	}()
	total := 0
	for _, op := range metaOps {
		total += op.weight
	}
	for i := range n {
		pick := rng.IntN(total)
		var op metaOp
		for _, op = range metaOps {
			if pick -= op.weight; pick < 0 {
				break
			}
		}
		rows := metaRows(rng, op)
		w := writers[op.name]
		if w == nil {
			var err error
			if w, err = env.Client.NewWriter(ctx, op.request(m.t.name)); err != nil {
				return fmt.Errorf("open writer %s: %w", op, err)
			}
			writers[op.name] = w
		}
		rec, err := buildRecord(env.Mem, m.t.fields(op.cols), rows)
		if err != nil {
			return err
		}
		res, err := writeOne(w, rec)
		if err != nil {
			return fmt.Errorf("batch %d, %s, rows %v: %w", i, op, rows, err)
		}
		want := m.apply(op, rows)
		if err := equalOffsets(fmt.Sprintf("batch %d, %s, rows %v: PutResult buckets (the end offset of each bucket its keys are in)", i, op, rows), res.Buckets, want); err != nil {
			return err
		}
	}
	for name, w := range writers {
		delete(writers, name)
		if err := w.Close(); err != nil {
			return fmt.Errorf("close writer %s: %w", name, err)
		}
	}
	return nil
}

// metaWrite writes one batch through a stream of its own and checks its
// PutResult against the model.
func metaWrite(ctx context.Context, env *Env, m *metaModel, op metaOp, rows pkBatch) error {
	res, err := writeRows(ctx, env, m.t, op.request(m.t.name), op.cols, rows)
	if err != nil {
		return fmt.Errorf("%s, rows %v: %w", op, rows, err)
	}
	return equalOffsets(fmt.Sprintf("%s, rows %v: PutResult buckets", op, rows), res[0].Buckets, m.apply(op, rows))
}

func writeOne(w *client.Writer, rec arrow.RecordBatch) (client.PutResult, error) {
	defer rec.Release()
	return w.Write(rec)
}

// metaVerify checks the snapshot, the $changelog from earliest (row by row),
// its replay, and the bounded "full" read against the model.
func metaVerify(ctx context.Context, env *Env, m *metaModel, when string) error {
	snap, bucketOf, err := readSnapshot(ctx, env, m.t)
	if err != nil {
		return fmt.Errorf("%s: %w", when, err)
	}
	if err := equalStates(when+": the snapshot (vs the model)", snap, m.rows); err != nil {
		return err
	}
	for k, b := range bucketOf {
		key, _ := strconv.ParseInt(k, 10, 64)
		if m.bucketOf[key] != b {
			return fmt.Errorf("%s: key %s is read from bucket %d, but a table with the same bucket key and bucket count put it into bucket %d", when, k, b, m.bucketOf[key])
		}
	}
	ends, err := env.Client.ListOffsets(ctx, m.t.name, client.Latest, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", when, err)
	}
	if err := equalOffsets(when+": list-offsets latest (vs the model)", ends, m.ends); err != nil {
		return err
	}
	cl, err := readChangelog(ctx, env, m.t, client.Earliest)
	if err != nil {
		return fmt.Errorf("%s: %w", when, err)
	}
	for b := range m.buckets {
		if err := equalLines(fmt.Sprintf("%s: %s from earliest, bucket %d (vs the model)", when, m.t.changelog(), b), lines(cl.buckets[b]), m.log[b]); err != nil {
			return err
		}
	}
	if err := cl.endsAt(when+": "+m.t.changelog()+" from earliest", m.ends); err != nil {
		return err
	}
	replayed, err := cl.replay(true)
	if err != nil {
		return fmt.Errorf("%s: %w", when, err)
	}
	if err := equalStates(when+": "+m.t.changelog()+" replayed from earliest (vs the model)", replayed, m.rows); err != nil {
		return err
	}
	full, err := readChangelog(ctx, env, m.t, client.Full)
	if err != nil {
		return fmt.Errorf("%s: %w", when, err)
	}
	if err := full.endsAt(when+": "+m.t.changelog()+" with startup full", m.ends); err != nil {
		return err
	}
	for b, at := range full.snapshot {
		if at != m.ends[b] {
			return fmt.Errorf("%s: %s with startup full: bucket %d's snapshot is at offset %d, want %d (the table is idle)", when, m.t.changelog(), b, at, m.ends[b])
		}
	}
	replayed, err = full.replay(true)
	if err != nil {
		return fmt.Errorf("%s: startup full: %w", when, err)
	}
	return equalStates(when+": "+m.t.changelog()+" with startup full, replayed (vs the model)", replayed, m.rows)
}

// metaFollow opens an unbounded "full" read of the $changelog, writes n more
// batches, and follows until every bucket's read reaches its end offset: the
// snapshot and the changes after it must replay to the model.
func metaFollow(ctx context.Context, env *Env, m *metaModel, rng *rand.Rand, n int) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := env.Client.Scan(sctx, client.ScanRequest{Table: m.t.changelog(), Startup: client.Full, Stop: client.Unbounded})
	if err != nil {
		return fmt.Errorf("plan an unbounded full read of %s: %w", m.t.changelog(), err)
	}
	defer s.Release()
	cl, err := newChangelog(m.t, s.Schema())
	if err != nil {
		return err
	}
	progress := make(chan client.BatchMeta, 64)
	var readErr error
	go func() {
		defer close(progress)
		for s.Next() {
			if err := cl.add(s.RecordBatch(), s.Meta()); err != nil {
				readErr = err
				return
			}
			progress <- s.Meta()
		}
		readErr = s.Err()
	}()
	drain := func() {
		cancel()
		for range progress {
		}
	}

	if err := metaRun(ctx, env, m, rng, n); err != nil {
		drain()
		return fmt.Errorf("while an unbounded full read follows: %w", err)
	}
	// A last write that changes every key, so that each bucket's read ends
	// with data rather than waiting for a heartbeat to carry its end offset.
	var last pkBatch
	for k := range int64(metaKeys) {
		last = append(last, []any{k, "last", k, nil})
	}
	if err := metaWrite(ctx, env, m, metaOps[0], last); err != nil {
		drain()
		return fmt.Errorf("while an unbounded full read follows: %w", err)
	}
	reached := map[int]int64{}
	deadline := time.After(5 * time.Second)
	for done := false; !done; {
		done = true
		for b, end := range m.ends {
			if reached[b] < end {
				done = false
			}
		}
		if done {
			break
		}
		select {
		case meta, ok := <-progress:
			if !ok {
				if readErr == nil {
					readErr = errors.New("the stream ended")
				}
				return fmt.Errorf("unbounded full read of %s ended before reaching the end offsets %v: %w", m.t.changelog(), m.ends, readErr)
			}
			reached[meta.Bucket] = max(reached[meta.Bucket], meta.Next)
		case <-deadline:
			drain()
			return fmt.Errorf("unbounded full read of %s: after 5 s it had reached offsets %v, want %v", m.t.changelog(), reached, m.ends)
		}
	}
	drain()
	if readErr != nil && status.Code(readErr) != codes.Canceled && !errors.Is(readErr, context.Canceled) {
		return fmt.Errorf("unbounded full read of %s: %w", m.t.changelog(), readErr)
	}
	replayed, err := cl.replay(true)
	if err != nil {
		return fmt.Errorf("unbounded full read: %w", err)
	}
	return equalStates(m.t.changelog()+" followed with startup full, replayed (vs the model)", replayed, m.rows)
}

// metaTable creates the scenario's table with a random bucket count, and
// learns which bucket each key goes to from a probe table with the same
// bucket key type and count (PROTOCOL.md §2: the bucket is a function of
// those alone).
func metaTable(ctx context.Context, env *Env, name string, rng *rand.Rand) (*metaModel, error) {
	buckets := 2 + rng.IntN(3)
	spec := func(table string) client.TableSpec {
		return client.TableSpec{Table: table, Columns: metaColumns, PrimaryKey: []string{"k"}, Options: map[string]string{"bucket.num": strconv.Itoa(buckets)}}
	}
	probe, _, err := createPK(ctx, env, spec(env.Table(name+"_probe")))
	if err != nil {
		return nil, err
	}
	var keys pkBatch
	for k := range int64(metaKeys) {
		keys = append(keys, []any{k})
	}
	if _, err := writeRows(ctx, env, probe, client.WriteRequest{Table: probe.name, Columns: []string{"k"}}, []string{"k"}, keys); err != nil {
		return nil, err
	}
	_, where, err := readSnapshot(ctx, env, probe)
	if err != nil {
		return nil, err
	}
	bucketOf := map[int64]int{}
	for k, b := range where {
		key, _ := strconv.ParseInt(k, 10, 64)
		bucketOf[key] = b
	}
	if len(bucketOf) != metaKeys {
		return nil, fmt.Errorf("probe table %s: %d keys written, %d read back (%v)", probe.name, metaKeys, len(bucketOf), slices.Sorted(maps.Keys(bucketOf)))
	}
	t, _, err := createPK(ctx, env, spec(env.Table(name)))
	if err != nil {
		return nil, err
	}
	return newMetaModel(t, buckets, bucketOf), nil
}

func pkMetamorphic(ctx context.Context, env *Env) error {
	seed := scenarioSeed()
	if err := metamorphic(ctx, env, seed); err != nil {
		return fmt.Errorf("%w (seed %d: rerun with CONFORMANCE_SEED=%d)", err, seed, seed)
	}
	return nil
}

func metamorphic(ctx context.Context, env *Env, seed int64) error {
	rng := rand.New(rand.NewPCG(uint64(seed), 5))
	m, err := metaTable(ctx, env, "metamorphic", rng)
	if err != nil {
		return err
	}
	if err := metaRun(ctx, env, m, rng, 300); err != nil {
		return fmt.Errorf("%d buckets: %w", m.buckets, err)
	}
	if err := metaVerify(ctx, env, m, fmt.Sprintf("%d buckets, after 300 batches", m.buckets)); err != nil {
		return err
	}
	if err := metaFollow(ctx, env, m, rng, 50); err != nil {
		return fmt.Errorf("%d buckets: %w", m.buckets, err)
	}
	return metaVerify(ctx, env, m, fmt.Sprintf("%d buckets, after 351 batches", m.buckets))
}

func pkMetamorphicRestart(ctx context.Context, env *Env) error {
	if err := env.needsRestart(); err != nil {
		return err
	}
	seed := scenarioSeed()
	if err := metamorphicRestart(ctx, env, seed); err != nil {
		return fmt.Errorf("%w (seed %d: rerun with CONFORMANCE_SEED=%d)", err, seed, seed)
	}
	return nil
}

func metamorphicRestart(ctx context.Context, env *Env, seed int64) error {
	rng := rand.New(rand.NewPCG(uint64(seed), 6))
	m, err := metaTable(ctx, env, "metamorphic_restart", rng)
	if err != nil {
		return err
	}
	if err := metaRun(ctx, env, m, rng, 100); err != nil {
		return fmt.Errorf("%d buckets: %w", m.buckets, err)
	}
	if err := metaVerify(ctx, env, m, fmt.Sprintf("%d buckets, before the restart", m.buckets)); err != nil {
		return err
	}
	if err := env.Restart(ctx); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	if err := metaVerify(ctx, env, m, fmt.Sprintf("%d buckets, after the restart", m.buckets)); err != nil {
		return err
	}
	if err := metaRun(ctx, env, m, rng, 80); err != nil {
		return fmt.Errorf("%d buckets, writing after the restart: %w", m.buckets, err)
	}
	return metaVerify(ctx, env, m, fmt.Sprintf("%d buckets, after writing on after the restart", m.buckets))
}
