package conformance

// pk-merge-engines: the changelog each merge engine writes, row by row and
// offset by offset (PROTOCOL.md §5.1, Fluss's changelog rules and
// merge engines), on one-bucket tables so that every offset is known: the default engine
// with the FULL and the WAL image, first_row and versioned. A write that
// changes nothing still takes one offset.

import (
	"context"
	"fmt"
	"slices"

	"github.com/fluxgate-io/fluxgate/client"
)

// engineStep is one write of an engine case and the end offset of the
// table's one bucket after it.
type engineStep struct {
	mode client.WriteMode
	cols []string
	rows pkBatch
	end  int64
}

// engineCase is a one-bucket table, the writes to it, and the changelog and
// rows they must leave.
type engineCase struct {
	name    string
	columns []client.Column
	options map[string]string
	// stamped are options describe-table must show.
	stamped map[string]string
	steps   []engineStep
	log     []string // the whole $changelog, as change.String renders it
	rows    [][]any
	full    bool // FULL changelog image
}

func pkMergeEngines(ctx context.Context, env *Env) error {
	kvn := []client.Column{{Name: "k", Type: "BIGINT"}, {Name: "v", Type: "STRING"}, {Name: "n", Type: "BIGINT"}}
	kvn3 := []string{"k", "v", "n"}
	upsert := func(end int64, rows ...[]any) engineStep { return engineStep{cols: kvn3, rows: rows, end: end} }
	del := func(end int64, keys ...int64) engineStep {
		s := engineStep{mode: client.ModeDelete, cols: []string{"k"}, end: end}
		for _, k := range keys {
			s.rows = append(s.rows, []any{k})
		}
		return s
	}
	r := func(vs ...any) []any {
		for i, v := range vs {
			if n, ok := v.(int); ok {
				vs[i] = int64(n)
			}
		}
		return vs
	}
	cases := []engineCase{{
		// Fluss's KvTablet: +I, -U/+U (also for an identical row), -D(old), and
		// nothing but an offset for a delete of a missing key.
		name: "engines_default", columns: kvn, full: true,
		stamped: map[string]string{"table.delete.behavior": "allow", "table.changelog.image": "full"},
		steps: []engineStep{
			upsert(2, r(1, "apple", 2), r(2, "pear", 3)),
			upsert(7, r(1, "banana", 4), r(3, "kiwi", 1), r(1, "cherry", 5)),
			del(8, 2, 9),
			del(9, 9),
			upsert(11, r(3, "kiwi", 1)),
			// A changelog write: insert and update_after upsert, delete deletes
			// (its other values ignored), update_before is skipped.
			{mode: client.ModeChangelog, cols: []string{changeTypeCol, "k", "v", "n"}, end: 15, rows: pkBatch{
				r(ctInsert, 4, "x", 7), r(ctUpdateBefore, 4, "x", 7), r(ctUpdateAfter, 4, "y", 8), r(ctDelete, 1, nil, nil),
			}},
			upsert(16, r(2, "fig", nil)),
		},
		log: []string{
			`0 insert (1, "apple", 2)`,
			`1 insert (2, "pear", 3)`,
			`2 update_before (1, "apple", 2)`,
			`3 update_after (1, "banana", 4)`,
			`4 insert (3, "kiwi", 1)`,
			`5 update_before (1, "banana", 4)`,
			`6 update_after (1, "cherry", 5)`,
			`7 delete (2, "pear", 3)`,
			`9 update_before (3, "kiwi", 1)`,
			`10 update_after (3, "kiwi", 1)`,
			`11 insert (4, "x", 7)`,
			`12 update_before (4, "x", 7)`,
			`13 update_after (4, "y", 8)`,
			`14 delete (1, "cherry", 5)`,
			`15 insert (2, "fig", NULL)`,
		},
		rows: [][]any{r(2, "fig", nil), r(3, "kiwi", 1), r(4, "y", 8)},
	}, {
		// Fluss's table.changelog.image = WAL: no update_before ever; a
		// whole-row write to a table without merge engine logs update_after
		// for a new key too. Deletes log the old row.
		name: "engines_wal", columns: kvn, options: map[string]string{"table.changelog.image": "wal"},
		stamped: map[string]string{"table.changelog.image": "wal", "table.delete.behavior": "allow"},
		steps: []engineStep{
			upsert(2, r(1, "a", 1), r(2, "b", 2)),
			upsert(4, r(1, "c", 3), r(1, "c", 3)),
			del(5, 2, 7),
			upsert(6, r(2, "d", nil)),
		},
		log: []string{
			`0 update_after (1, "a", 1)`,
			`1 update_after (2, "b", 2)`,
			`2 update_after (1, "c", 3)`,
			`3 update_after (1, "c", 3)`,
			`4 delete (2, "b", 2)`,
			`5 update_after (2, "d", NULL)`,
		},
		rows: [][]any{r(1, "c", 3), r(2, "d", nil)},
	}, {
		// Fluss's FirstRowRowMerger: the first row of a key stays; later writes and
		// deletes (ignored) change nothing; the changelog is insert-only.
		name: "engines_first_row", columns: kvn, full: true,
		options: map[string]string{"table.merge-engine": "first_row"},
		stamped: map[string]string{"table.merge-engine": "first_row", "table.delete.behavior": "ignore"},
		steps: []engineStep{
			upsert(2, r(1, "a", 1), r(2, "b", 2), r(1, "c", 3)),
			upsert(3, r(2, "z", 9), r(1, "z", 9)),
			del(4, 1, 2),
			upsert(5, r(3, "d", 4), r(2, "y", nil)),
		},
		log: []string{
			`0 insert (1, "a", 1)`,
			`1 insert (2, "b", 2)`,
			`4 insert (3, "d", 4)`,
		},
		rows: [][]any{r(1, "a", 1), r(2, "b", 2), r(3, "d", 4)},
	}, {
		// Fluss's VersionedRowMerger: the highest version stays; a tie lets the new row
		// win (also NULL against NULL); an older version or NULL against a
		// version changes nothing.
		name: "engines_versioned", full: true,
		columns: kvn,
		options: map[string]string{"table.merge-engine": "versioned", "table.merge-engine.versioned.ver-column": "n"},
		stamped: map[string]string{"table.merge-engine": "versioned", "table.delete.behavior": "ignore"},
		steps: []engineStep{
			upsert(2, r(1, "a", 10), r(2, "p", nil)),
			upsert(3, r(1, "b", 9)),
			upsert(7, r(1, "c", 10), r(1, "d", 11), r(1, "e", 10)),
			upsert(9, r(2, "q", nil)),
			upsert(11, r(2, "r", 5), r(2, "s", nil), r(1, "f", nil)),
			upsert(13, r(1, "d", 11)),
			del(14, 1),
		},
		log: []string{
			`0 insert (1, "a", 10)`,
			`1 insert (2, "p", NULL)`,
			`3 update_before (1, "a", 10)`,
			`4 update_after (1, "c", 10)`,
			`5 update_before (1, "c", 10)`,
			`6 update_after (1, "d", 11)`,
			`7 update_before (2, "p", NULL)`,
			`8 update_after (2, "q", NULL)`,
			`9 update_before (2, "q", NULL)`,
			`10 update_after (2, "r", 5)`,
			`11 update_before (1, "d", 11)`,
			`12 update_after (1, "d", 11)`,
		},
		rows: [][]any{r(1, "d", 11), r(2, "r", 5)},
	}}
	for _, ec := range cases {
		if err := runEngineCase(ctx, env, ec); err != nil {
			return fmt.Errorf("%s: %w", ec.name, err)
		}
	}
	return nil
}

func runEngineCase(ctx context.Context, env *Env, ec engineCase) error {
	opts := map[string]string{"bucket.num": "1"}
	for k, v := range ec.options {
		opts[k] = v
	}
	spec := client.TableSpec{Table: env.Table(ec.name), Columns: ec.columns, PrimaryKey: []string{"k"}, Options: opts}
	t, info, err := createPK(ctx, env, spec)
	if err != nil {
		return err
	}
	for k, v := range ec.stamped {
		if info.Options[k] != v {
			return fmt.Errorf("create-table %s with options %v: TableInfo option %s = %q, want %q (PROTOCOL.md §3)", t.name, ec.options, k, info.Options[k], v)
		}
	}
	for i, s := range ec.steps {
		req := client.WriteRequest{Table: t.name, Mode: s.mode}
		res, err := writeRows(ctx, env, t, req, s.cols, s.rows)
		if err != nil {
			return fmt.Errorf("write %d (mode %q, rows %v): %w", i, s.mode, s.rows, err)
		}
		if err := equalOffsets(fmt.Sprintf("write %d (mode %q, rows %v): PutResult buckets", i, s.mode, s.rows), res[0].Buckets, map[int]int64{0: s.end}); err != nil {
			return err
		}
	}
	cl, err := readChangelog(ctx, env, t, client.Position{})
	if err != nil {
		return err
	}
	if err := equalLines(t.changelog()+" from earliest", lines(cl.buckets[0]), ec.log); err != nil {
		return err
	}
	end := ec.steps[len(ec.steps)-1].end
	if err := cl.endsAt(t.changelog()+" from earliest", map[int]int64{0: end}); err != nil {
		return err
	}
	want := pkState{}
	for _, r := range ec.rows {
		want[t.keyOf(r)] = r
	}
	if _, err := checkConsistent(ctx, env, t, ec.full, want, "after the writes"); err != nil {
		return err
	}
	// full on $changelog: the rows as inserts at the snapshot's offset, which
	// is the end offset of the idle table; nothing after.
	full, err := readChangelog(ctx, env, t, client.Full)
	if err != nil {
		return err
	}
	var snap []string
	for _, r := range ec.rows {
		snap = append(snap, change{kind: ctInsert, offset: end, row: r}.String())
	}
	got := lines(full.buckets[0])
	slices.Sort(got)
	slices.Sort(snap)
	if err := equalLines(t.changelog()+" with startup full", got, snap); err != nil {
		return err
	}
	return full.endsAt(t.changelog()+" with startup full", map[int]int64{0: end})
}
