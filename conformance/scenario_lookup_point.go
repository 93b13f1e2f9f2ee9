package conformance

// lookup-point-and-prefix: point lookups (PROTOCOL.md §6.1) return the rows
// of the keys found, ascending by _key_index, projected as asked, and see
// every write acknowledged before them, also on a long-lived stream; prefix
// lookups (§6.2) return every row with the prefix; describe-table lists the
// prefix index exactly when the bucket key is a strict, ordered prefix of the
// primary key; an inline lookup through GetFlightInfo (§6.3) answers as the
// stream does.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/client"
)

var ppColumns = []client.Column{
	{Name: "a", Type: "BIGINT"},
	{Name: "b", Type: "STRING"},
	{Name: "v", Type: "STRING"},
	{Name: "n", Type: "BIGINT"},
}

func lookupPointAndPrefix(ctx context.Context, env *Env) error {
	seed := scenarioSeed()
	if err := pointAndPrefix(ctx, env, seed); err != nil {
		return fmt.Errorf("%w (seed %d: rerun with CONFORMANCE_SEED=%d)", err, seed, seed)
	}
	return nil
}

// checkIndexes checks the indexes describe-table lists for a table.
func checkIndexes(ctx context.Context, env *Env, table string, want []client.Index) error {
	info, err := env.Client.DescribeTable(ctx, table)
	if err != nil {
		return err
	}
	render := func(idx []client.Index) string {
		parts := make([]string, len(idx))
		for i, x := range idx {
			parts[i] = fmt.Sprintf("%s%v", x.Name, x.Columns)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	if got := render(info.Indexes); got != render(want) {
		return fmt.Errorf("describe-table %s (primary key %v, bucket.key %q): indexes %s, want %s (PROTOCOL.md §6.2)",
			table, info.PrimaryKey, info.Options["bucket.key"], got, render(want))
	}
	return nil
}

func pointAndPrefix(ctx context.Context, env *Env, seed int64) error {
	rng := rand.New(rand.NewPCG(uint64(seed), 5))
	spec := func(name string, pk []string, bucketKey string) client.TableSpec {
		opts := map[string]string{"bucket.num": "3"}
		if bucketKey != "" {
			opts["bucket.key"] = bucketKey
		}
		return client.TableSpec{Table: env.Table(name), Columns: ppColumns, PrimaryKey: pk, Options: opts}
	}
	t, _, err := createPK(ctx, env, spec("lk_pp", []string{"a", "b"}, "a"))
	if err != nil {
		return err
	}
	pkIndex := client.Index{Name: "primary_key", Columns: []string{"a", "b"}}
	if err := checkIndexes(ctx, env, t.name, []client.Index{pkIndex, {Name: "prefix", Columns: []string{"a"}}}); err != nil {
		return err
	}
	for _, tc := range []struct {
		name      string
		pk        []string
		bucketKey string
	}{
		{"lk_pp_nobucketkey", []string{"a", "b"}, ""},       // the bucket key is the primary key
		{"lk_pp_wholekey", []string{"a", "b"}, "a,b"},       // not strictly shorter
		{"lk_pp_notprefix", []string{"a", "b"}, "b"},        // not a prefix
		{"lk_pp_single", []string{"a"}, "a"},                // a one-column key
		{"lk_pp_reordered", []string{"a", "b", "n"}, "b,a"}, // the columns of a prefix, out of order
	} {
		if _, _, err := createPK(ctx, env, spec(tc.name, tc.pk, tc.bucketKey)); err != nil {
			return err
		}
		if err := checkIndexes(ctx, env, env.Table(tc.name), []client.Index{{Name: "primary_key", Columns: tc.pk}}); err != nil {
			return err
		}
	}
	t3, _, err := createPK(ctx, env, spec("lk_pp_three", []string{"a", "b", "n"}, "a,b"))
	if err != nil {
		return err
	}
	if err := checkIndexes(ctx, env, t3.name, []client.Index{{Name: "primary_key", Columns: []string{"a", "b", "n"}},
		{Name: "prefix", Columns: []string{"a", "b"}}}); err != nil {
		return err
	}

	// The table: a in 0..11, b in x0..x5, about half the pairs present.
	model := pkState{}
	version := 0
	randomRows := func(n int) pkBatch {
		var rows pkBatch
		seen := map[string]bool{}
		for len(rows) < n {
			r := []any{int64(rng.IntN(12)), "x" + strconv.Itoa(rng.IntN(6)), nil, nil}
			if k := t.keyOf(r); !seen[k] {
				seen[k] = true
				version++
				if rng.IntN(5) != 0 {
					r[2] = "v" + strconv.Itoa(version)
				}
				r[3] = int64(version)
				rows = append(rows, r)
			}
		}
		return rows
	}
	apply := func(rows pkBatch) {
		for _, r := range rows {
			model[t.keyOf(r)] = r
		}
	}
	all := []string{"a", "b", "v", "n"}
	first := randomRows(40)
	if _, err := writeRows(ctx, env, t, client.WriteRequest{Table: t.name}, all, first); err != nil {
		return err
	}
	apply(first)

	keyFields := t.fields([]string{"a", "b"})
	randomKeys := func(n int) [][]any {
		keys := make([][]any, n)
		for i := range keys {
			keys[i] = []any{int64(rng.IntN(14)), "x" + strconv.Itoa(rng.IntN(7))}
		}
		if n > 3 {
			keys[n-1] = keys[0] // a key twice in one batch
		}
		return keys
	}
	// wantPoint is the answer the model gives: the rows of the keys found.
	wantPoint := func(keys [][]any, cols []int) []string {
		var out []string
		for i, k := range keys {
			r, ok := model[fmtValue(k[0])+","+fmtValue(k[1])]
			if !ok {
				continue
			}
			out = append(out, lookupRow{key: i, row: project(r, cols)}.String())
		}
		return out
	}
	render := func(rows []lookupRow) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = r.String()
		}
		return out
	}

	// Point lookups on one stream, with writes between them: each sees the
	// writes acknowledged before it was sent.
	lk, err := openLookup(ctx, env, t, client.LookupRequest{Table: t.name}, keyFields)
	if err != nil {
		return err
	}
	proj, err := openLookup(ctx, env, t, client.LookupRequest{Table: t.name, Columns: []string{"n", "a"}}, keyFields)
	if err != nil {
		lk.close()
		return err
	}
	defer lk.l.Close()
	defer proj.l.Close()
	for round := range 6 {
		keys := randomKeys(1 + rng.IntN(30))
		got, err := lk.lookup(keys)
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		if err := equalLines(fmt.Sprintf("round %d: point lookup of %d keys (vs the rows written)", round, len(keys)), render(got), wantPoint(keys, []int{0, 1, 2, 3})); err != nil {
			return err
		}
		got, err = proj.lookup(keys)
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		if err := equalLines(fmt.Sprintf("round %d: point lookup of %d keys, columns [n, a]", round, len(keys)), render(got), wantPoint(keys, []int{3, 0})); err != nil {
			return err
		}
		// Update some keys, insert others, then look up exactly those.
		rows := randomRows(1 + rng.IntN(10))
		if _, err := writeRows(ctx, env, t, client.WriteRequest{Table: t.name}, all, rows); err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		apply(rows)
		written := make([][]any, len(rows))
		for i, r := range rows {
			written[i] = []any{r[0], r[1]}
		}
		got, err = lk.lookup(written)
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		if err := equalLines(fmt.Sprintf("round %d: point lookup, on the same stream, of the %d keys just written (a lookup sees every write acknowledged before it)", round, len(written)),
			render(got), wantPoint(written, []int{0, 1, 2, 3})); err != nil {
			return err
		}
	}
	// An empty key batch has an empty answer.
	if got, err := lk.lookup(nil); err != nil || len(got) != 0 {
		return fmt.Errorf("point lookup of an empty key batch: %v, %v; want no rows", got, err)
	}
	if err := lk.close(); err != nil {
		return err
	}
	if err := proj.close(); err != nil {
		return err
	}

	// The key columns are found by name: (b, a) works as (a, b).
	keys := randomKeys(12)
	swapped := make([][]any, len(keys))
	for i, k := range keys {
		swapped[i] = []any{k[1], k[0]}
	}
	got, err := lookupOnce(ctx, env, t, client.LookupRequest{Table: t.name}, t.fields([]string{"b", "a"}), swapped)
	if err != nil {
		return err
	}
	if err := equalLines("point lookup with the key columns in the order (b, a)", render(got), wantPoint(keys, []int{0, 1, 2, 3})); err != nil {
		return err
	}

	// Prefix lookups: every row with the prefix, grouped by key.
	prefixKeys := [][]any{{int64(3)}, {int64(13)}, {int64(0)}, {int64(3)}}
	for a := range int64(12) {
		prefixKeys = append(prefixKeys, []any{a})
	}
	wantPrefix := func(keys [][]any, cols []int) []string {
		var out []lookupRow
		for i, k := range keys {
			for _, r := range model {
				if r[0] == k[0] {
					out = append(out, lookupRow{key: i, row: project(r, cols)})
				}
			}
		}
		return groupedLines(out)
	}
	sortedWithinKey := groupedLines
	for _, cols := range [][]string{nil, {"b", "n"}} {
		req := client.LookupRequest{Table: t.name, Prefix: true, Columns: cols}
		got, err := lookupOnce(ctx, env, t, req, t.fields([]string{"a"}), prefixKeys)
		if err != nil {
			return err
		}
		idx := []int{0, 1, 2, 3}
		if cols != nil {
			idx = []int{1, 3}
		}
		if err := equalLines(describeLookup(req)+" of a = 3, 13, 0, 3, 0..11 (vs the rows written)", sortedWithinKey(got), wantPrefix(prefixKeys, idx)); err != nil {
			return err
		}
	}

	// A two-column prefix of a three-column key.
	rows3 := pkBatch{}
	for i := range int64(30) {
		rows3 = append(rows3, []any{i % 3, "x" + strconv.FormatInt(i%2, 10), "w", i})
	}
	if _, err := writeRows(ctx, env, t3, client.WriteRequest{Table: t3.name}, all, rows3); err != nil {
		return err
	}
	got, err = lookupOnce(ctx, env, t3, client.LookupRequest{Table: t3.name, Prefix: true, Columns: []string{"n"}},
		t3.fields([]string{"a", "b"}), [][]any{{int64(2), "x1"}, {int64(0), "x9"}, {int64(1), "x0"}})
	if err != nil {
		return err
	}
	var want3 []lookupRow
	for i, k := range [][]any{{int64(2), "x1"}, {int64(0), "x9"}, {int64(1), "x0"}} {
		for _, r := range rows3 {
			if r[0] == k[0] && r[1] == k[1] {
				want3 = append(want3, lookupRow{key: i, row: []any{r[3]}})
			}
		}
	}
	if err := equalLines("prefix lookup of (a, b) in "+t3.name+", whose primary key is (a, b, n)", sortedWithinKey(got), groupedLines(want3)); err != nil {
		return err
	}

	// Inline lookups answer as the stream does.
	keys = randomKeys(15)
	maps := make([]map[string]any, len(keys))
	for i, k := range keys {
		maps[i] = map[string]any{"a": k[0], "b": k[1]}
	}
	for _, req := range []client.LookupRequest{{Table: t.name}, {Table: t.name, Columns: []string{"v", "b"}}} {
		stream, err := lookupOnce(ctx, env, t, req, keyFields, keys)
		if err != nil {
			return err
		}
		inline, err := inlineRows(ctx, env, t, req, maps, true)
		if err != nil {
			return err
		}
		if err := equalLines("inline "+describeLookup(req)+" (vs the same lookup through DoExchange)", render(inline), render(stream)); err != nil {
			return err
		}
	}
	preq := client.LookupRequest{Table: t.name, Prefix: true}
	pmaps := []map[string]any{{"a": 5}, {"a": 99}, {"a": 1}}
	stream, err := lookupOnce(ctx, env, t, preq, t.fields([]string{"a"}), [][]any{{int64(5)}, {int64(99)}, {int64(1)}})
	if err != nil {
		return err
	}
	inline, err := inlineRows(ctx, env, t, preq, pmaps, false)
	if err != nil {
		return err
	}
	return equalLines("inline "+describeLookup(preq)+" of a = 5, 99, 1 (vs the same lookup through DoExchange)", sortedWithinKey(inline), sortedWithinKey(stream))
}

// project picks the columns cols of a row.
func project(r []any, cols []int) []any {
	out := make([]any, len(cols))
	for i, c := range cols {
		out[i] = r[c]
	}
	return out
}

// inlineRows runs an inline lookup and checks its answer as answerRows does
// (without app_metadata, which DoGet batches of an inline lookup need not
// carry).
func inlineRows(ctx context.Context, env *Env, t *pkTable, req client.LookupRequest, keys []map[string]any, unique bool) ([]lookupRow, error) {
	tbl, err := env.Client.LookupInline(ctx, req, keys)
	if err != nil {
		return nil, fmt.Errorf("inline %s: %w", describeLookup(req), err)
	}
	defer tbl.Release()
	rdr := array.NewTableReader(tbl, -1)
	defer rdr.Release()
	var out []lookupRow
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rows, err := answerRows("inline "+describeLookup(req), rec, client.LookupMeta{Keys: len(keys), Rows: int(rec.NumRows())}, len(keys), t.resultFields(req.Columns), unique)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && len(rows) > 0 && rows[0].key < out[len(out)-1].key {
			return nil, fmt.Errorf("inline %s: rows not ascending by %s across batches", describeLookup(req), client.KeyIndexColumn)
		}
		out = append(out, rows...)
	}
	if len(out) == 0 {
		// Check the schema even without rows.
		empty := tbl.Schema()
		if empty.NumFields() != len(t.resultFields(req.Columns))+1 || empty.Field(0).Name != client.KeyIndexColumn {
			return nil, fmt.Errorf("inline %s: result schema %s", describeLookup(req), empty)
		}
	}
	return out, nil
}

// groupedLines renders answer rows with the rows of each key sorted: a
// prefix lookup's rows of one key come in no particular order.
func groupedLines(rows []lookupRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	start := 0
	for i := 1; i <= len(rows); i++ {
		if i == len(rows) || rows[i].key != rows[start].key {
			slices.Sort(out[start:i])
			start = i
		}
	}
	return out
}
