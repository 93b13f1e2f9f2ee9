package conformance_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/client"
)

// The primary-key crash test's shape: writers per table and cycle, rows per
// batch, kill/restart cycles, how long writers run before the kill, and the
// key spaces (the aggregation table's keys are shared by all writers; each
// writer of the default table has keys of its own, so that its rows' fate
// can be told apart).
const (
	pkCrashWriters  = 4
	pkCrashRows     = 40
	pkCrashCycles   = 3
	pkCrashRunFor   = 1000 * time.Millisecond
	pkCrashInFlight = 4
	pkCrashAggKeys  = 300
	pkCrashKVKeys   = 200
)

// TestPrimaryKeyCrashRecovery SIGKILLs the server while idempotent writers
// upsert an aggregation table (sum) and write changelog batches (upserts and
// deletes) to a default-engine table, restarts it, and checks PROTOCOL.md §5
// for primary-key tables: every acknowledged batch took effect exactly once,
// every other batch wholly or not at all (as a prefix of each writer's
// unacknowledged batches, which apply in order), the $changelog replays to
// the rows, and a retry of the last acknowledged batch is recognised as a
// duplicate and changes nothing.
func TestPrimaryKeyCrashRecovery(t *testing.T) {
	srv := startServer(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := testContext(t, 2*time.Minute)
	c, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close() }()
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	x := &pkCrash{
		seed: time.Now().UnixNano(),
		agg:  "fluss.pkcrash_agg_" + suffix,
		kv:   "fluss.pkcrash_kv_" + suffix,
		mem:  mem,
	}
	t.Logf("seed %d", x.seed)
	x.aggBase = map[int64][2]int64{}
	for w := range x.kvModels {
		x.kvModels[w] = newKVModel()
	}
	specs := []client.TableSpec{{
		Table:      x.agg,
		Columns:    []client.Column{{Name: "k", Type: "BIGINT"}, {Name: "total", Type: "BIGINT"}, {Name: "cnt", Type: "BIGINT"}},
		PrimaryKey: []string{"k"},
		Options: map[string]string{"bucket.num": "4", "table.merge-engine": "aggregation",
			"fields.total.agg": "sum", "fields.cnt.agg": "sum"},
	}, {
		Table:      x.kv,
		Columns:    []client.Column{{Name: "k", Type: "BIGINT"}, {Name: "v", Type: "BIGINT"}},
		PrimaryKey: []string{"k"},
		Options:    map[string]string{"bucket.num": "4"},
	}}
	for _, spec := range specs {
		if _, err := c.CreateTable(ctx, spec, false); err != nil {
			t.Fatal(err)
		}
	}
	for cycle := range pkCrashCycles {
		streams := x.writeUntilKilled(ctx, t, c, srv, cycle)
		if err := srv.start(); err != nil {
			t.Fatalf("cycle %d: restart after SIGKILL: %v", cycle, err)
		}
		nc, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem))
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		c = nc
		aggRows := x.verifyAgg(ctx, t, c, cycle, streams[0])
		kvRows := x.verifyKV(ctx, t, c, cycle, streams[1])
		x.retryLastAcked(ctx, t, c, cycle, streams, aggRows, kvRows)
	}
}

// pkCrash is the test's state: the tables, and what the batches determined
// so far (acknowledged, or found applied after a crash) add up to.
type pkCrash struct {
	seed    int64
	agg, kv string
	mem     memory.Allocator

	aggBase  map[int64][2]int64 // key → (total, cnt)
	kvModels [pkCrashWriters]*kvModel
}

// pkStream is one writer's stream in one cycle: how many batches it sent
// (handed to Send, maybe never transmitted) and the acknowledgements, which
// come in order.
type pkStream struct {
	cycle, writer int
	table         string
	req           client.WriteRequest
	build         func(batch int) arrow.RecordBatch

	mu   sync.Mutex
	sent int
	acks []client.PutResult
}

func (s *pkStream) String() string { return s.req.WriterID }

// writeUntilKilled runs the cycle's writers of both tables and SIGKILLs the
// server while they write. It returns the aggregation and the default
// table's streams.
func (x *pkCrash) writeUntilKilled(ctx context.Context, t *testing.T, c *client.Client, srv *server, cycle int) [2][]*pkStream {
	t.Helper()
	var out [2][]*pkStream
	for w := range pkCrashWriters {
		out[0] = append(out[0], &pkStream{cycle: cycle, writer: w, table: x.agg,
			req:   client.WriteRequest{Table: x.agg, WriterID: fmt.Sprintf("pkcrash-agg-c%d-w%d", cycle, w)},
			build: func(b int) arrow.RecordBatch { return x.aggBatch(cycle, w, b) }})
		out[1] = append(out[1], &pkStream{cycle: cycle, writer: w, table: x.kv,
			req:   client.WriteRequest{Table: x.kv, Mode: client.ModeChangelog, WriterID: fmt.Sprintf("pkcrash-kv-c%d-w%d", cycle, w)},
			build: func(b int) arrow.RecordBatch { return x.kvBatch(cycle, w, b) }})
	}
	var wg sync.WaitGroup
	for _, ss := range out {
		for _, s := range ss {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.run(ctx, c)
			}()
		}
	}
	time.Sleep(pkCrashRunFor) // writers run until the kill; nothing to wait for
	if err := srv.kill(); err != nil {
		t.Fatalf("cycle %d: SIGKILL: %v", cycle, err)
	}
	wg.Wait()
	return out
}

// run sends batches until the stream fails, recording each Send and each
// acknowledgement.
func (s *pkStream) run(ctx context.Context, c *client.Client) {
	wr, err := c.NewWriter(ctx, s.req, client.WithMaxInFlight(pkCrashInFlight))
	if err != nil {
		return
	}
	recvDone := make(chan struct{})
	go func() {
		defer close(recvDone)
		for {
			res, err := wr.Recv()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.acks = append(s.acks, res)
			s.mu.Unlock()
		}
	}()
	for b := 0; ; b++ {
		rec := s.build(b)
		s.mu.Lock()
		s.sent = b + 1
		s.mu.Unlock()
		err := wr.Send(rec)
		rec.Release()
		if err != nil {
			break
		}
	}
	<-recvDone
	wr.Close()
}

// state returns how many batches were sent and acknowledged.
func (s *pkStream) state() (sent, acked int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent, len(s.acks)
}

func (x *pkCrash) rng(table string, cycle, w, b int) *rand.Rand {
	h := uint64(len(table))*1_000_003 + uint64(cycle)<<40 + uint64(w)<<32 + uint64(b)
	return rand.New(rand.NewPCG(uint64(x.seed), h))
}

var (
	pkCrashAggSchema = arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "total", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "cnt", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	pkCrashKVSchema = arrow.NewSchema([]arrow.Field{
		{Name: "_change_type", Type: arrow.BinaryTypes.String},
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
)

// aggRow is one row of an aggregation batch: a shared key, an amount, and 1
// for the row count.
type aggRow struct{ key, amount int64 }

func (x *pkCrash) aggRows(cycle, w, b int) []aggRow {
	rng := x.rng(x.agg, cycle, w, b)
	rows := make([]aggRow, pkCrashRows)
	for i := range rows {
		rows[i] = aggRow{int64(rng.IntN(pkCrashAggKeys)), 1 + rng.Int64N(1_000_000)}
	}
	return rows
}

func (x *pkCrash) aggBatch(cycle, w, b int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(x.mem, pkCrashAggSchema)
	defer bld.Release()
	for _, r := range x.aggRows(cycle, w, b) {
		bld.Field(0).(*array.Int64Builder).Append(r.key)
		bld.Field(1).(*array.Int64Builder).Append(r.amount)
		bld.Field(2).(*array.Int64Builder).Append(1)
	}
	return bld.NewRecordBatch()
}

// kvRow is one row of a changelog batch to the default table: an upsert
// (insert or update_after) or a delete of one of the writer's own keys, with
// a value naming the batch and row.
type kvRow struct {
	kind   string
	key, v int64
}

func (x *pkCrash) kvRows(cycle, w, b int) []kvRow {
	rng := x.rng(x.kv, cycle, w, b)
	rows := make([]kvRow, pkCrashRows)
	for i := range rows {
		kind := "insert"
		switch r := rng.IntN(10); {
		case r < 2:
			kind = "delete"
		case r < 6:
			kind = "update_after"
		}
		rows[i] = kvRow{kind, int64(w)*100_000 + int64(rng.IntN(pkCrashKVKeys)), int64(cycle)<<40 | int64(w)<<32 | int64(b)<<12 | int64(i)}
	}
	return rows
}

func (x *pkCrash) kvBatch(cycle, w, b int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(x.mem, pkCrashKVSchema)
	defer bld.Release()
	for _, r := range x.kvRows(cycle, w, b) {
		bld.Field(0).(*array.StringBuilder).Append(r.kind)
		bld.Field(1).(*array.Int64Builder).Append(r.key)
		bld.Field(2).(*array.Int64Builder).Append(r.v)
	}
	return bld.NewRecordBatch()
}

// crashRow is a row read back: its bucket, change type and offset (in a
// $changelog read) and its BIGINT columns.
type crashRow struct {
	bucket int
	kind   string
	offset int64
	vals   []int64
}

// readAll reads a table whose columns are all BIGINT: the snapshot of its
// plain name, or (changelog) its $changelog from the earliest offset. It
// returns the rows per bucket in read order.
func readAll(ctx context.Context, c *client.Client, table string, changelog bool) (map[int][]crashRow, error) {
	req := client.ScanRequest{Table: table}
	if changelog {
		req.Table += "$changelog"
	}
	s, err := c.Scan(ctx, req)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	out := map[int][]crashRow{}
	for s.Next() {
		rec, m := s.RecordBatch(), s.Meta()
		var kinds *array.String
		var offsets *array.Int64
		var vals []*array.Int64
		for j, f := range rec.Schema().Fields() {
			switch col := rec.Column(j).(type) {
			case *array.String:
				kinds = col
			case *array.Int64:
				if col.NullN() > 0 {
					return nil, fmt.Errorf("read %s: column %s has NULLs; the test never writes NULL", req.Table, f.Name)
				}
				if f.Name == "_log_offset" {
					offsets = col
				} else {
					vals = append(vals, col)
				}
			}
		}
		n, w := int(rec.NumRows()), len(vals)
		flat := make([]int64, n*w)
		for i := range n {
			r := crashRow{bucket: m.Bucket, vals: flat[i*w : (i+1)*w : (i+1)*w]}
			if kinds != nil {
				r.kind = kinds.Value(i)
			}
			if offsets != nil {
				r.offset = offsets.Value(i)
			}
			for j, col := range vals {
				r.vals[j] = col.Value(i)
			}
			out[m.Bucket] = append(out[m.Bucket], r)
		}
	}
	return out, s.Err()
}

// snapshotOf reads a table's rows as key → the other columns, checking that
// no key is there twice.
func snapshotOf(ctx context.Context, t *testing.T, c *client.Client, table string, cycle int) map[int64][]int64 {
	t.Helper()
	rows, err := readAll(ctx, c, table, false)
	if err != nil {
		t.Fatalf("cycle %d: read %s after restart: %v", cycle, table, err)
	}
	out := map[int64][]int64{}
	for _, rs := range rows {
		for _, r := range rs {
			if _, dup := out[r.vals[0]]; dup {
				t.Fatalf("cycle %d: %s holds key %d twice", cycle, table, r.vals[0])
			}
			out[r.vals[0]] = r.vals[1:]
		}
	}
	return out
}

// kvChange is one changelog row of the default table.
type kvChange struct {
	kind   string
	key, v int64
}

func (c kvChange) String() string { return fmt.Sprintf("%s (%d, %d)", c.kind, c.key, c.v) }

// replayChangelog reads the table's $changelog from the earliest offset,
// replays it (checking the FULL image: inserts of absent keys, update_before
// and delete carrying the current row) and checks that it ends at the
// snapshot's rows. For a table of two columns it returns each key's changes
// in order.
func replayChangelog(ctx context.Context, t *testing.T, c *client.Client, table string, cycle int, snapshot map[int64][]int64) map[int64][]kvChange {
	t.Helper()
	rows, err := readAll(ctx, c, table, true)
	if err != nil {
		t.Fatalf("cycle %d: read %s$changelog after restart: %v", cycle, table, err)
	}
	state := map[int64][]int64{}
	changes := map[int64][]kvChange{}
	for b, rs := range rows {
		last := int64(-1)
		for _, r := range rs {
			k, vals := r.vals[0], r.vals[1:]
			where := fmt.Sprintf("cycle %d: %s$changelog bucket %d offset %d: %s %v", cycle, table, b, r.offset, r.kind, r.vals)
			if r.offset <= last {
				t.Fatalf("%s follows offset %d", where, last)
			}
			last = r.offset
			cur, ok := state[k]
			switch r.kind {
			case "insert":
				if ok {
					t.Fatalf("%s: the key is present as %v", where, cur)
				}
				state[k] = vals
			case "update_before", "delete":
				if !ok || !slices.Equal(cur, vals) {
					t.Fatalf("%s: want the key's current row %v (present %v)", where, cur, ok)
				}
				if r.kind == "delete" {
					delete(state, k)
				}
			case "update_after":
				state[k] = vals
			default:
				t.Fatalf("%s: unknown change type", where)
			}
			if len(vals) == 1 {
				changes[k] = append(changes[k], kvChange{r.kind, k, vals[0]})
			}
		}
	}
	for k, want := range snapshot {
		if got, ok := state[k]; !ok || !slices.Equal(got, want) {
			t.Fatalf("cycle %d: %s$changelog replayed gives key %d = %v (present %v); the table holds %v", cycle, table, k, got, ok, want)
		}
	}
	for k, got := range state {
		if _, ok := snapshot[k]; !ok {
			t.Fatalf("cycle %d: %s$changelog replayed gives key %d = %v; the table does not hold it", cycle, table, k, got)
		}
	}
	return changes
}

// verifyAgg checks the aggregation table: its sums must be the determined
// batches' plus, per writer of this cycle, its acknowledged batches and a
// prefix of its unacknowledged ones. It freezes the prefixes found.
func (x *pkCrash) verifyAgg(ctx context.Context, t *testing.T, c *client.Client, cycle int, streams []*pkStream) map[int64][]int64 {
	t.Helper()
	got := snapshotOf(ctx, t, c, x.agg, cycle)
	replayChangelog(ctx, t, c, x.agg, cycle, got)

	base := maps.Clone(x.aggBase)
	add := func(m map[int64][2]int64, rows []aggRow) {
		for _, r := range rows {
			v := m[r.key]
			m[r.key] = [2]int64{v[0] + r.amount, v[1] + 1}
		}
	}
	// prefix[w][p]: the sums of writer w's first p unacknowledged batches.
	prefix := make([][]map[int64][2]int64, len(streams))
	ackedN, unackedN := 0, 0
	for w, s := range streams {
		sent, acked := s.state()
		ackedN += acked
		unackedN += sent - acked
		for b := range acked {
			add(base, x.aggRows(cycle, w, b))
		}
		prefix[w] = []map[int64][2]int64{{}}
		for b := acked; b < sent; b++ {
			next := maps.Clone(prefix[w][len(prefix[w])-1])
			add(next, x.aggRows(cycle, w, b))
			prefix[w] = append(prefix[w], next)
		}
	}
	if ackedN == 0 {
		t.Fatalf("cycle %d: no batch to %s was acknowledged in %s", cycle, x.agg, pkCrashRunFor)
	}
	// Try every combination of prefixes.
	choice := make([]int, len(streams))
	var found []int
	var try func(w int) bool
	try = func(w int) bool {
		if w == len(streams) {
			return aggMatches(got, base, prefix, choice)
		}
		for p := range prefix[w] {
			choice[w] = p
			if try(w + 1) {
				return true
			}
		}
		return false
	}
	if try(0) {
		found = slices.Clone(choice)
	}
	if found == nil {
		var desc []string
		for _, s := range streams {
			sent, acked := s.state()
			desc = append(desc, fmt.Sprintf("%s: %d acknowledged, %d not", s, acked, sent-acked))
		}
		t.Fatalf("cycle %d: the sums in %s are not those of the acknowledged batches plus a prefix of each writer's unacknowledged ones (%s); %s",
			cycle, x.agg, strings.Join(desc, "; "), aggDiff(got, base))
	}
	applied := 0
	for w, p := range found {
		applied += p
		for k, v := range prefix[w][p] {
			b := base[k]
			base[k] = [2]int64{b[0] + v[0], b[1] + v[1]}
		}
	}
	x.aggBase = base
	t.Logf("cycle %d: %s: %d batches acknowledged, %d sent without acknowledgement of which %d were applied", cycle, x.agg, ackedN, unackedN, applied)
	return got
}

func aggMatches(got map[int64][]int64, base map[int64][2]int64, prefix [][]map[int64][2]int64, choice []int) bool {
	want := maps.Clone(base)
	for w, p := range choice {
		for k, v := range prefix[w][p] {
			b := want[k]
			want[k] = [2]int64{b[0] + v[0], b[1] + v[1]}
		}
	}
	if len(want) != len(got) {
		return false
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok || g[0] != v[0] || g[1] != v[1] {
			return false
		}
	}
	return true
}

// aggDiff describes how the table differs from the acknowledged batches
// alone.
func aggDiff(got map[int64][]int64, acked map[int64][2]int64) string {
	var d []string
	for _, k := range slices.Sorted(maps.Keys(acked)) {
		if g, ok := got[k]; !ok || g[0] != acked[k][0] || g[1] != acked[k][1] {
			d = append(d, fmt.Sprintf("key %d: %v, acknowledged batches alone give %v", k, g, acked[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := acked[k]; !ok {
			d = append(d, fmt.Sprintf("key %d: %v, not in any acknowledged batch", k, got[k]))
		}
	}
	if len(d) > 6 {
		d = append(d[:6], fmt.Sprintf("and %d more", len(d)-6))
	}
	return strings.Join(d, "; ")
}

// kvModel is one default-table writer's keys as its batches leave them, and
// each key's changelog.
type kvModel struct {
	rows    map[int64]int64
	changes map[int64][]kvChange
}

func newKVModel() *kvModel { return &kvModel{rows: map[int64]int64{}, changes: map[int64][]kvChange{}} }

// apply runs a batch through Fluss's rules for a changelog write (PROTOCOL.md
// §5: insert and update_after upsert, delete deletes); rows alone when
// changes is false.
func (m *kvModel) apply(rows []kvRow, changes bool) {
	log := func(kind string, k, v int64) {
		if changes {
			m.changes[k] = append(m.changes[k], kvChange{kind, k, v})
		}
	}
	for _, r := range rows {
		old, ok := m.rows[r.key]
		switch {
		case r.kind == "delete" && ok:
			log("delete", r.key, old)
			delete(m.rows, r.key)
		case r.kind == "delete":
		case ok:
			log("update_before", r.key, old)
			log("update_after", r.key, r.v)
			m.rows[r.key] = r.v
		default:
			log("insert", r.key, r.v)
			m.rows[r.key] = r.v
		}
	}
}

// verifyKV checks the default table: each writer's keys must be as its
// determined batches, this cycle's acknowledged ones and a prefix of its
// unacknowledged ones leave them, and each key's changelog must be exactly
// what those batches wrote, once.
func (x *pkCrash) verifyKV(ctx context.Context, t *testing.T, c *client.Client, cycle int, streams []*pkStream) map[int64][]int64 {
	t.Helper()
	got := snapshotOf(ctx, t, c, x.kv, cycle)
	changes := replayChangelog(ctx, t, c, x.kv, cycle, got)
	ownerOf := func(k int64) int { return int(k / 100_000) }
	mine := make([]map[int64]int64, pkCrashWriters)
	for w := range mine {
		mine[w] = map[int64]int64{}
	}
	for k, v := range got {
		w := ownerOf(k)
		if w < 0 || w >= pkCrashWriters || k%100_000 >= pkCrashKVKeys {
			t.Fatalf("cycle %d: %s holds key %d, which no writer writes", cycle, x.kv, k)
		}
		mine[w][k] = v[0]
	}
	ackedN, unackedN, appliedN := 0, 0, 0
	for w, s := range streams {
		m := x.kvModels[w]
		sent, acked := s.state()
		ackedN += acked
		unackedN += sent - acked
		for b := range acked {
			m.apply(x.kvRows(cycle, w, b), true)
		}
		probe := &kvModel{rows: maps.Clone(m.rows)}
		applied := -1
		for p := 0; ; p++ {
			if maps.Equal(probe.rows, mine[w]) {
				applied = p
				break
			}
			if acked+p == sent {
				break
			}
			probe.apply(x.kvRows(cycle, w, acked+p), false)
		}
		if applied < 0 {
			var diffs []string
			for _, k := range slices.Sorted(maps.Keys(m.rows)) {
				if v, ok := mine[w][k]; !ok || v != m.rows[k] {
					diffs = append(diffs, fmt.Sprintf("key %d = %d (present %v), acknowledged batches give %d", k, v, ok, m.rows[k]))
				}
			}
			for _, k := range slices.Sorted(maps.Keys(mine[w])) {
				if _, ok := m.rows[k]; !ok {
					diffs = append(diffs, fmt.Sprintf("key %d = %d, absent after the acknowledged batches", k, mine[w][k]))
				}
			}
			if len(diffs) > 6 {
				diffs = append(diffs[:6], fmt.Sprintf("and %d more", len(diffs)-6))
			}
			t.Fatalf("cycle %d: the keys of %s in %s are not what its %d acknowledged batches and a prefix of its %d unacknowledged ones leave: %s",
				cycle, s, x.kv, acked, sent-acked, strings.Join(diffs, "; "))
		}
		for p := range applied {
			m.apply(x.kvRows(cycle, w, acked+p), true)
		}
		appliedN += applied
	}
	// Each key's changelog is what the batches wrote, each batch once.
	for w, m := range x.kvModels {
		for k, want := range m.changes {
			if got := changes[k]; !slices.Equal(got, want) {
				t.Fatalf("cycle %d: key %d (writer %d) has the changelog\n  %v\nwant (each applied batch once)\n  %v", cycle, k, w, got, want)
			}
		}
	}
	for k, got := range changes {
		if w := ownerOf(k); w < 0 || w >= pkCrashWriters || x.kvModels[w].changes[k] == nil {
			t.Fatalf("cycle %d: key %d has changelog rows %v, but no applied batch wrote it", cycle, k, got)
		}
	}
	t.Logf("cycle %d: %s: %d batches acknowledged, %d sent without acknowledgement of which %d were applied", cycle, x.kv, ackedN, unackedN, appliedN)
	if ackedN == 0 {
		t.Fatalf("cycle %d: no batch to %s was acknowledged in %s", cycle, x.kv, pkCrashRunFor)
	}
	return got
}

// retryLastAcked re-sends each stream's last acknowledged batch under its
// writer id and sequence: the server must acknowledge it as it did the first
// time and apply nothing.
func (x *pkCrash) retryLastAcked(ctx context.Context, t *testing.T, c *client.Client, cycle int, streams [2][]*pkStream, aggRows, kvRows map[int64][]int64) {
	t.Helper()
	before := map[string]map[int]int64{}
	for _, table := range []string{x.agg, x.kv} {
		offs, err := c.ListOffsets(ctx, table, client.Latest, nil)
		if err != nil {
			t.Fatal(err)
		}
		before[table] = offs
	}
	for _, ss := range streams {
		for _, s := range ss {
			_, acked := s.state()
			if acked == 0 {
				t.Logf("cycle %d: %s had no batch acknowledged; nothing to retry", cycle, s)
				continue
			}
			last := acked - 1
			first := s.acks[last]
			req := s.req
			req.FirstSequence = int64(last)
			wr, err := c.NewWriter(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			rec := s.build(last)
			res, err := wr.Write(rec)
			rec.Release()
			if cerr := wr.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatalf("cycle %d: retry of %s batch %d: %v", cycle, s, last, err)
			}
			if res.Sequence != first.Sequence || res.Rows != first.Rows || !maps.Equal(res.Buckets, first.Buckets) {
				t.Fatalf("cycle %d: retry of %s batch %d acknowledged as %+v, want the first acknowledgement %+v", cycle, s, last, res, first)
			}
		}
	}
	for table, offs := range before {
		after, err := c.ListOffsets(ctx, table, client.Latest, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(offs, after) {
			t.Fatalf("cycle %d: the retries of acknowledged batches moved the offsets of %s from %v to %v", cycle, table, offs, after)
		}
	}
	for table, rows := range map[string]map[int64][]int64{x.agg: aggRows, x.kv: kvRows} {
		now := snapshotOf(ctx, t, c, table, cycle)
		if !maps.EqualFunc(now, rows, slices.Equal) {
			t.Fatalf("cycle %d: the retries of acknowledged batches changed the rows of %s", cycle, table)
		}
	}
}
