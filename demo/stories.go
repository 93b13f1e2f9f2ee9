package demo

// The stories of fluxgate demo: each creates its tables, writes a little
// data the way a streaming job would, and prints what the storage made of
// it. The same stories, at scale and checked, are conformance scenarios
// (pk-partial-update-join, lookup-global-dictionary,
// pk-aggregation-exactly-once).

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/cli"
)

type demoStory struct {
	title string
	run   func(d *demo) error
}

var demoStories = []demoStory{
	{"Updates without dedup state", demoUpdates},
	{"Partial-update join", demoJoin},
	{"Global dictionary", demoDictionary},
	{"Storage-side aggregation, exactly once", demoAggregation},
	{"Lake-stream union read", demoLake},
}

// changelogCols are the columns a changelog is shown with (the commit
// timestamp left out: it differs from run to run).
func changelogCols(cols ...string) []string {
	return append([]string{"_change_type", "_log_offset"}, cols...)
}

func demoUpdates(d *demo) error {
	d.say("A primary-key table keeps the latest row per key and writes its own changelog.")
	d.say("An order source writes inserts, then updates, then a delete:")
	fields, err := d.create(client.TableSpec{
		Table: "fluss.orders",
		Columns: []client.Column{
			{Name: "order_id", Type: "BIGINT"}, {Name: "status", Type: "STRING"}, {Name: "amount", Type: "DOUBLE"},
		},
		PrimaryKey: []string{"order_id"},
	})
	if err != nil {
		return err
	}
	if _, err := d.write(client.WriteRequest{Table: "fluss.orders"}, fields,
		[][]any{{int64(1), "created", 25.0}, {int64(2), "created", 40.0}, {int64(3), "created", 12.5}},
		[][]any{{int64(1), "paid", 25.0}, {int64(3), "paid", 12.5}},
		[][]any{{int64(1), "shipped", 25.0}},
	); err != nil {
		return err
	}
	if _, err := d.write(client.WriteRequest{Table: "fluss.orders", Mode: client.ModeDelete},
		fields[:1], [][]any{{int64(2)}}); err != nil {
		return err
	}
	d.say("  upsert (1 created) (2 created) (3 created); upsert (1 paid) (3 paid); upsert (1 shipped); delete 2")
	if err := d.show("fluss.orders (the current rows):", "fluss.orders", nil, "order_id"); err != nil {
		return err
	}
	if err := d.show("fluss.orders$changelog (what a streaming reader gets):", "fluss.orders$changelog",
		changelogCols("order_id", "status", "amount"), "_log_offset"); err != nil {
		return err
	}
	d.say("\nThe changelog carries update_before/update_after and delete: a Flink job reading it needs no")
	d.say("dedup or ROW_NUMBER state to know the current value of an order.")

	d.say("\nWith table.merge-engine=first_row the first row of a key wins; later duplicates are ignored")
	d.say("and produce no changelog at all (an at-least-once source deduplicated in storage):")
	visitFields, err := d.create(client.TableSpec{
		Table:      "fluss.first_visit",
		Columns:    []client.Column{{Name: "user", Type: "STRING"}, {Name: "page", Type: "STRING"}},
		PrimaryKey: []string{"user"},
		Options:    map[string]string{"table.merge-engine": "first_row"},
	})
	if err != nil {
		return err
	}
	visits := [][]any{{"ann", "home"}, {"bob", "pricing"}, {"ann", "docs"}, {"bob", "home"}, {"cat", "blog"}, {"ann", "home"}}
	var said []string
	for _, v := range visits {
		said = append(said, fmt.Sprintf("(%s %s)", v[0], v[1]))
	}
	d.say("  upsert %s", strings.Join(said, " "))
	if _, err := d.write(client.WriteRequest{Table: "fluss.first_visit"}, visitFields, visits); err != nil {
		return err
	}
	if err := d.show("fluss.first_visit:", "fluss.first_visit", nil, "user"); err != nil {
		return err
	}
	return d.show("fluss.first_visit$changelog:", "fluss.first_visit$changelog", changelogCols("user", "page"), "_log_offset")
}

func demoJoin(d *demo) error {
	d.say("Two streams fill disjoint columns of one table by partial updates (write with \"columns\"):")
	d.say("the table is their join, kept by the storage; no join state in any job.")
	fields, err := d.create(client.TableSpec{
		Table: "fluss.enriched",
		Columns: []client.Column{
			{Name: "id", Type: "BIGINT"}, {Name: "order_info", Type: "STRING"}, {Name: "user_info", Type: "STRING"},
		},
		PrimaryKey: []string{"id"},
	})
	if err != nil {
		return err
	}
	orders := client.WriteRequest{Table: "fluss.enriched", Columns: []string{"id", "order_info"}}
	if _, err := d.write(orders, []arrow.Field{fields[0], fields[1]},
		[][]any{{int64(1), "2x apple"}, {int64(2), "1x pear"}, {int64(3), "5x plum"}}); err != nil {
		return err
	}
	d.say("  the order stream writes (id, order_info) of ids 1, 2, 3")
	if err := d.show("fluss.enriched after the order stream:", "fluss.enriched", nil, "id"); err != nil {
		return err
	}
	users := client.WriteRequest{Table: "fluss.enriched", Columns: []string{"id", "user_info"}}
	if _, err := d.write(users, []arrow.Field{fields[0], fields[2]},
		[][]any{{int64(3), "cat, Oslo"}, {int64(1), "ann, Paris"}},
		[][]any{{int64(2), "bob, Berlin"}}); err != nil {
		return err
	}
	d.say("\n  the user stream writes (id, user_info) of ids 3, 1, then 2, at its own pace")
	return d.show("fluss.enriched, joined:", "fluss.enriched", nil, "id")
}

// demoDict is the dictionary of story 3, reused by story 4.
const demoDict = "fluss.uid_map"

// lookupIDs maps user ids to dense INT ids through the dictionary with one
// insert-if-not-exists lookup per batch, over one DoExchange stream.
func (d *demo) lookupIDs(l *client.Lookuper, users []string) ([]int32, error) {
	rec, err := d.record([]arrow.Field{demoField("uid", "STRING")}, rowsOf(users))
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	ans, _, err := l.Lookup(rec)
	if err != nil {
		return nil, err
	}
	defer ans.Release()
	s := ans.Schema()
	ki, ii := s.FieldIndices("_key_index"), s.FieldIndices("uid_int")
	if len(ki) == 0 || len(ii) == 0 {
		return nil, fmt.Errorf("lookup answer without _key_index or uid_int: %s", s)
	}
	ids := make([]int32, len(users))
	found := 0
	for r := 0; r < int(ans.NumRows()); r++ {
		k, err := intValue(ans.Column(ki[0]), r)
		if err != nil {
			return nil, err
		}
		id, err := intValue(ans.Column(ii[0]), r)
		if err != nil {
			return nil, err
		}
		if k < 0 || int(k) >= len(users) {
			return nil, fmt.Errorf("lookup answer for key %d of %d", k, len(users))
		}
		ids[k] = int32(id)
		found++
	}
	if found != len(users) {
		return nil, fmt.Errorf("insert-if-not-exists of %d keys answered %d rows", len(users), found)
	}
	return ids, nil
}

func rowsOf(xs []string) [][]any {
	rows := make([][]any, len(xs))
	for i, x := range xs {
		rows[i] = []any{x}
	}
	return rows
}

func intValue(col arrow.Array, i int) (int64, error) {
	if col.IsNull(i) {
		return 0, errors.New("NULL where an integer was expected")
	}
	switch a := col.(type) {
	case *array.Int32:
		return int64(a.Value(i)), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Uint32:
		return int64(a.Value(i)), nil
	}
	return 0, fmt.Errorf("%s where an integer was expected", col.DataType())
}

func demoDictionary(d *demo) error {
	d.say("A table with an auto-increment column is a global dictionary: insert-if-not-exists lookups")
	d.say("give every user id a dense INT id, the same one forever (what bitmaps of distinct users need).")
	if _, err := d.create(client.TableSpec{
		Table:      demoDict,
		Columns:    []client.Column{{Name: "uid", Type: "STRING"}, {Name: "uid_int", Type: "INT"}},
		PrimaryKey: []string{"uid"},
		Options:    map[string]string{"auto-increment.fields": "uid_int"},
	}); err != nil {
		return err
	}
	l, err := d.cl.Lookup(d.ctx, client.LookupRequest{Table: demoDict, InsertIfNotExists: true})
	if err != nil {
		return err
	}
	defer l.Close()
	var rows [][]string
	for _, batch := range [][]string{{"alice", "bob", "alice"}, {"carol", "bob", "dave"}, {"alice", "erin"}} {
		ids, err := d.lookupIDs(l, batch)
		if err != nil {
			return err
		}
		var got []string
		for _, id := range ids {
			got = append(got, strconv.Itoa(int(id)))
		}
		rows = append(rows, []string{"    " + strings.Join(batch, " "), strings.Join(got, " ")})
	}
	if err := d.table("insert-if-not-exists lookups, one batch per line:", []string{"user ids", "uid_int"}, trimIndent(rows)); err != nil {
		return err
	}
	header, mapping, err := d.read(demoDict, []string{"uid", "uid_int"}, "uid_int", nil)
	if err != nil {
		return err
	}
	if err := d.table(demoDict+":", header, mapping); err != nil {
		return err
	}
	dense := true
	for i, r := range mapping {
		if r[1] != strconv.Itoa(i+1) {
			dense = false
		}
	}
	if dense {
		d.note("\n  %d distinct users, ids dense 1..%d; repeats got their first id back.", len(mapping), len(mapping))
	} else {
		d.note("\n  %d distinct users, ids NOT dense: %v", len(mapping), mapping)
	}
	return nil
}

// trimIndent undoes the indent of the first cell (table adds its own).
func trimIndent(rows [][]string) [][]string {
	for _, r := range rows {
		r[0] = strings.TrimPrefix(r[0], "    ")
	}
	return rows
}

// demoEvent is a page view of story 4.
type demoEvent struct{ day, user string }

func demoAggregation(d *demo) error {
	d.say("An aggregation table merges every write into the stored row: pv sums page views, users")
	d.say("(rbm32) unions RoaringBitmaps of dictionary ids. A sink writes per-batch partial aggregates.")
	const uv = "fluss.uv"
	fields, err := d.create(client.TableSpec{
		Table: uv,
		Columns: []client.Column{
			{Name: "day", Type: "STRING"}, {Name: "users", Type: "BYTES"}, {Name: "pv", Type: "BIGINT"},
		},
		PrimaryKey: []string{"day"},
		Options: map[string]string{
			"table.merge-engine": "aggregation", "fields.users.agg": "rbm32", "fields.pv.agg": "sum",
		},
	})
	if err != nil {
		return err
	}
	l, err := d.cl.Lookup(d.ctx, client.LookupRequest{Table: demoDict, InsertIfNotExists: true})
	if err != nil {
		return err
	}
	defer l.Close()
	const d1, d2 = "2024-06-01", "2024-06-02"
	batches := [][]demoEvent{
		{{d1, "alice"}, {d1, "bob"}, {d1, "alice"}, {d2, "carol"}},
		{{d1, "dave"}, {d1, "bob"}, {d2, "alice"}, {d2, "carol"}},
		{{d1, "erin"}, {d1, "alice"}, {d2, "bob"}, {d2, "bob"}},
		{{d2, "frank"}, {d2, "alice"}},
		{{d1, "frank"}},
	}
	const checkpointAfter, failAfter = 2, 4 // batches 0..1 before the checkpoint; the sink fails after batch 3
	// sink writes batches[from:to], one pre-aggregated record batch each.
	sink := func(from, to int) (map[int]int64, error) {
		var recs [][][]any
		for _, events := range batches[from:to] {
			users := make([]string, len(events))
			for i, e := range events {
				users[i] = e.user
			}
			ids, err := d.lookupIDs(l, users)
			if err != nil {
				return nil, err
			}
			bms, pv := map[string]*roaring.Bitmap{}, map[string]int64{}
			for i, e := range events {
				if bms[e.day] == nil {
					bms[e.day] = roaring.New()
				}
				bms[e.day].Add(uint32(ids[i]))
				pv[e.day]++
			}
			var rows [][]any
			for _, day := range slices.Sorted(maps.Keys(bms)) {
				b, err := bms[day].ToBytes()
				if err != nil {
					return nil, err
				}
				rows = append(rows, []any{day, b, pv[day]})
			}
			recs = append(recs, rows)
		}
		return d.write(client.WriteRequest{Table: uv}, fields, recs...)
	}
	show := func(caption string) error {
		header, rows, err := d.read(uv, []string{"day", "pv", "users"}, "day", map[string]func(arrow.Array, int) string{
			"users": renderBitmap,
		})
		if err != nil {
			return err
		}
		return d.table(caption, header, rows)
	}

	ends, err := sink(0, checkpointAfter)
	if err != nil {
		return err
	}
	checkpoint := map[int]int64{0: 0}
	maps.Copy(checkpoint, ends)
	d.say("  the sink writes batches 1-%d, then checkpoints the offsets its writes were acknowledged with: %s",
		checkpointAfter, fmtOffsets(checkpoint))
	if err := show(uv + " at the checkpoint (users: distinct count {dictionary ids}):"); err != nil {
		return err
	}
	if _, err := sink(checkpointAfter, failAfter); err != nil {
		return err
	}
	d.say("\n  it writes batches %d-%d, then fails before its next checkpoint. The table has counted them,",
		checkpointAfter+1, failAfter)
	d.say("  and the restarted job will replay them from the checkpoint: they would count twice.")
	if err := show(uv + " when the sink fails:"); err != nil {
		return err
	}
	undo, err := d.cl.Undo(d.ctx, uv, checkpoint)
	if err != nil {
		return err
	}
	d.note("\n  undo to the checkpoint %s: %d keys restored, the changelog now ends at %s",
		fmtOffsets(checkpoint), undo.UndoneKeys, fmtOffsets(undo.Offsets))
	if err := show(uv + " after the undo (as at the checkpoint):"); err != nil {
		return err
	}
	if _, err := sink(checkpointAfter, len(batches)); err != nil {
		return err
	}
	d.say("\n  the restarted sink replays batches %d-%d and goes on with batch %d", checkpointAfter+1, failAfter, len(batches))
	header, rows, err := d.read(uv, []string{"day", "pv", "users"}, "day", map[string]func(arrow.Array, int) string{
		"users": renderBitmap,
	})
	if err != nil {
		return err
	}
	if err := d.table(uv+" at the end:", header, rows); err != nil {
		return err
	}

	// The exact answer, from the input itself.
	wantPV, wantUsers := map[string]int{}, map[string]map[string]bool{}
	for _, events := range batches {
		for _, e := range events {
			wantPV[e.day]++
			if wantUsers[e.day] == nil {
				wantUsers[e.day] = map[string]bool{}
			}
			wantUsers[e.day][e.user] = true
		}
	}
	gotPV, gotUsers := map[string]string{}, map[string]string{}
	for _, r := range rows {
		gotPV[r[0]] = r[1]
		gotUsers[r[0]] = cardinalityOf(r[2])
	}
	var parts []string
	ok := len(rows) == len(wantPV)
	for _, day := range slices.Sorted(maps.Keys(wantPV)) {
		pv, users := strconv.Itoa(wantPV[day]), strconv.Itoa(len(wantUsers[day]))
		parts = append(parts, fmt.Sprintf("%s pv=%s users=%s", day, gotPV[day], gotUsers[day]))
		if gotPV[day] != pv || gotUsers[day] != users {
			ok = false
			parts[len(parts)-1] += fmt.Sprintf(" (want pv=%s users=%s)", pv, users)
		}
	}
	verdict := "every event counted exactly once"
	if !ok {
		verdict = "MISMATCH with the input"
	}
	d.note("\n  exactly-once totals: %s: %s", strings.Join(parts, ", "), verdict)
	if !ok {
		return errors.New("the aggregation does not match its input")
	}
	return nil
}

// renderBitmap renders an rbm32 value as its cardinality and ids.
func renderBitmap(col arrow.Array, i int) string {
	b, ok := col.(*array.Binary)
	if !ok {
		return cli.FormatValue(col, i)
	}
	bm := roaring.New()
	if err := bm.UnmarshalBinary(b.Value(i)); err != nil {
		return "not a bitmap: " + err.Error()
	}
	ids := make([]string, 0, bm.GetCardinality())
	for _, id := range bm.ToArray() {
		ids = append(ids, strconv.FormatUint(uint64(id), 10))
	}
	return fmt.Sprintf("%d {%s}", bm.GetCardinality(), strings.Join(ids, ","))
}

// cardinalityOf takes the cardinality back out of renderBitmap's text.
func cardinalityOf(s string) string {
	n, _, _ := strings.Cut(s, " ")
	return n
}

func fmtOffsets(offsets map[int]int64) string {
	var parts []string
	for _, b := range slices.Sorted(maps.Keys(offsets)) {
		parts = append(parts, fmt.Sprintf("bucket %d @ %d", b, offsets[b]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func demoLake(d *demo) error {
	d.say("A lake-enabled table is tiered into an Iceberg table (in the server's warehouse, <data>/lake by")
	d.say("default) at least every table.datalake.freshness; tier-now runs a round at once. Reading the")
	d.say("table by its name is a union read: the lake snapshot, then the log after it: one table.")
	fields, err := d.create(client.TableSpec{
		Table:   "fluss.clicks",
		Columns: []client.Column{{Name: "user", Type: "STRING"}, {Name: "page", Type: "STRING"}},
		Options: map[string]string{"table.datalake.enabled": "true", "table.datalake.freshness": "1h"},
	})
	if err != nil {
		return err
	}
	if _, err := d.write(client.WriteRequest{Table: "fluss.clicks"}, fields,
		[][]any{{"ann", "home"}, {"bob", "pricing"}, {"ann", "docs"}}); err != nil {
		return err
	}
	d.say("  append (ann home) (bob pricing) (ann docs)")
	snap, err := d.cl.TierNow(d.ctx, "fluss.clicks")
	if err != nil {
		return fmt.Errorf("tier-now: %w", err)
	}
	d.note("  tier-now: lake snapshot committed with offsets %s", fmtOffsets(snap.Offsets))
	if _, err := d.write(client.WriteRequest{Table: "fluss.clicks"}, fields,
		[][]any{{"cat", "blog"}, {"bob", "home"}}); err != nil {
		return err
	}
	d.say("  append (cat blog) (bob home), not tiered yet")
	if err := d.show("fluss.clicks$lake (the Iceberg table; any Iceberg reader sees the same rows):", "fluss.clicks$lake",
		[]string{"user", "page", "__bucket", "__offset"}, "__offset"); err != nil {
		return err
	}
	return d.show("fluss.clicks (union read: the lake, then the log from offset 3):", "fluss.clicks", nil, "")
}
