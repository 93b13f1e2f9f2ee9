package bench

// The workloads of fluxgate bench. Each is one entry of benchWorkloads: a
// fluxgate measurement beside its baseline, in the same run. Adding a
// workload is adding an entry.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/util"

	"github.com/fluxgate-io/fluxgate/bench/benchdata"
	"github.com/fluxgate-io/fluxgate/bucketing"
	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/row"
)

// benchWorkload is one line of the report.
type benchWorkload struct {
	name     string // what --run matches
	baseline string // what the baseline measures
	notes    string
	// prepare runs once, untimed, before the runs.
	prepare func(ctx context.Context, e *benchEnv) error
	// base and measure are one timed run of the baseline and of fluxgate.
	base    func(ctx context.Context, e *benchEnv, rep int) (benchSample, error)
	measure func(ctx context.Context, e *benchEnv, rep int) (benchSample, error)
	// finish may complete the result's notes.
	finish func(e *benchEnv, r *benchResult)
}

var benchWorkloads = []benchWorkload{
	{
		name: "append/none", baseline: "no-op Flight DoPut",
		notes: "log table, no compression, fsync before ack",
		base:  benchNoopAppend(benchEventBatches), measure: benchAppend("none"), finish: benchStoredNote("none"),
	},
	{
		name: "append/zstd", baseline: "no-op Flight DoPut",
		notes: "log table, ZSTD (the table default), fsync before ack",
		base:  benchNoopAppend(benchEventBatches), measure: benchAppend("zstd"), finish: benchStoredNote("zstd"),
	},
	{
		name: "append/narrow", baseline: "no-op Flight DoPut",
		notes: "the peer benchmarks' data (bench/peers): 8 columns in 8,192-row batches, 4 buckets, default table (ZSTD) and Go client (ZSTD batches, stored as received), fsync before ack",
		base:  benchNoopAppend(benchNarrowBatches), measure: benchNarrowAppend, finish: benchNarrowStoredNote,
	},
	{
		name: "scan/narrow", baseline: "asking for none",
		notes:   "full scan of append/narrow's table as stored (the default: ZSTD batches, decompressed by the client); baseline: uncompressed batches (decompressed by the server)",
		prepare: benchNarrowLoad, base: benchNarrowScan("none"), measure: benchNarrowScan(""),
	},
	{
		name: "scan/none", baseline: "in-memory DoGet", notes: "full scan, table without compression",
		prepare: benchLoadEvents("none"), base: benchMemoryScan, measure: benchTableScan("none", "", nil),
	},
	{
		name: "scan/zstd", baseline: "scan/none",
		notes:   "full scan of the ZSTD table, asking for ZSTD: batches go out as stored, the client decompresses",
		prepare: benchLoadEvents("zstd", "none"), base: benchTableScan("none", "", nil), measure: benchTableScan("zstd", "zstd", nil),
	},
	{
		name: "scan/zstd-decoded", baseline: "scan/none",
		notes:   "full scan of the ZSTD table, asking for uncompressed batches: the server decompresses",
		prepare: benchLoadEvents("zstd", "none"), base: benchTableScan("none", "", nil), measure: benchTableScan("zstd", "", nil),
	},
	{
		name: "projection/2of20", baseline: "all 20 columns", notes: "ts and amount, table without compression",
		prepare: benchLoadEvents("none"), base: benchTableScan("none", "", nil), measure: benchTableScan("none", "", benchProjection),
	},
	{
		name: "filter/1pct", baseline: "unfiltered scan",
		prepare: benchFilterPrepare, base: benchTableScan("none", "", nil), measure: benchFilterScan, finish: benchFilterNote,
	},
	{
		name: "partition/1of30", baseline: "full scan of 30 days",
		notes:   fmt.Sprintf("the events in %d day partitions (ts order), table without compression; filter dt = %s; rows/s counts the table's rows", benchPartDays, benchPartDT(benchPartDay)),
		prepare: benchPartPrepare, base: benchPartFullScan, measure: benchPartScan, finish: benchPartNote(benchPartScan),
	},
	{
		name: "partition/1of30-named", baseline: "full scan of 30 days",
		notes:   fmt.Sprintf("partition/1of30's day read by naming it (\"partitions\": [%q]); rows/s counts the table's rows", benchPartDT(benchPartDay)),
		prepare: benchPartPrepare, base: benchPartFullScan, measure: benchPartNamedScan, finish: benchPartNote(benchPartNamedScan),
	},
	{
		name: "lookup/point", baseline: "raw pebble gets",
		notes:   fmt.Sprintf("%d-key batches over Flight, %d in flight; baseline: point gets in process", benchdata.LookupBatch, benchdata.LookupWindow),
		prepare: benchKVPrepare, base: benchPebbleGets, measure: benchPointLookups,
	},
	{
		name: "lookup/insert-if-not-exists", baseline: "raw pebble get+set",
		notes:   fmt.Sprintf("new keys, %d-key batches over Flight, %d in flight, auto-increment id; baseline: get, set, commit in process", benchdata.LookupBatch, benchdata.LookupWindow),
		prepare: benchKVPrepare, base: benchPebbleInserts, measure: benchInsertIfNotExists,
	},
	{
		name: "upsert/aggregation", baseline: "raw pebble writes",
		notes:   "sum and rbm32 columns, every key once a run (first run inserts); baseline: blind writes in process",
		prepare: benchAggPrepare, base: benchPebbleAggWrites, measure: benchAggUpserts,
	},
	{
		name: "tiering", baseline: "raw iceberg-go appends",
		notes: "tier-now of the events (untimed append first); baseline: WriteRecords and one commit of the same batches",
		base:  benchIcebergAppend, measure: benchTier,
	},
	{
		name: "tiering/pk-updates", baseline: "the same rows as inserts",
		notes: "tier-now of a primary-key table's second batch of rows, one in ten updating a key in the lake (position deletes); baseline: all new keys",
		base:  benchPKTier(0), measure: benchPKTier(10),
	},
	{
		name: "lake/compaction", baseline: "iceberg-go RewriteDataFiles",
		notes: fmt.Sprintf("compact-lake of a log table tiered in %d small rounds (untimed), maintenance included; baseline: iceberg-go's bin-pack plan and rewrite of a table appended in as many commits", benchCompactRounds),
		base:  benchIcebergCompact, measure: benchCompactLake,
	},
	{
		name: "union-read", baseline: "log scan",
		notes:   "full scan of a table whose first half is in the lake, the rest in the log; baseline: the same rows all in the log",
		prepare: benchUnionPrepare, base: benchTableScan("none", "", nil), measure: benchUnionScan,
	},
}

// Appends and scans of the event table.

func benchWrite(ctx context.Context, cl *client.Client, table string, recs []arrow.RecordBatch) error {
	w, err := cl.NewWriter(ctx, client.WriteRequest{Table: table})
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := w.Send(r); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// benchEventBatches and benchNarrowBatches are the batches of the append
// workloads, with their rows and Arrow bytes.
func benchEventBatches(e *benchEnv) ([]arrow.RecordBatch, int64, int64) {
	ev := e.eventData()
	return ev.recs, ev.rows, ev.bytes
}

func benchNarrowBatches(e *benchEnv) ([]arrow.RecordBatch, int64, int64) {
	n := e.narrowData()
	return n.Recs, n.Rows, n.Bytes
}

// benchNoopAppend appends data's batches to the baseline server, which keeps
// nothing.
func benchNoopAppend(data func(*benchEnv) ([]arrow.RecordBatch, int64, int64)) func(context.Context, *benchEnv, int) (benchSample, error) {
	return func(ctx context.Context, e *benchEnv, _ int) (benchSample, error) {
		recs, rows, bytes := data(e)
		cl, err := e.baseline()
		if err != nil {
			return benchSample{}, err
		}
		start := time.Now()
		if err := benchWrite(ctx, cl, "bench.noop", recs); err != nil {
			return benchSample{}, err
		}
		return benchSample{rows: rows, bytes: bytes, d: time.Since(start)}, nil
	}
}

// benchAppend appends the events to a new table each run. The last run's
// table becomes the event table of that compression (for the scans), and
// its size is the stored size.
func benchAppend(compression string) func(context.Context, *benchEnv, int) (benchSample, error) {
	return func(ctx context.Context, e *benchEnv, rep int) (benchSample, error) {
		spec := benchEventSpec(fmt.Sprintf("fluss.bench_append_%s_%d", compression, rep), compression)
		return e.appendToNewTable(ctx, compression, spec, benchEventBatches)
	}
}

// The narrow workloads: the data of bench/peers, in its batches.

const benchNarrowBatchRows = 8192

// benchNarrowAppend appends the narrow data to a new table each run; the
// last run's table is the narrow table of the scans.
func benchNarrowAppend(ctx context.Context, e *benchEnv, rep int) (benchSample, error) {
	spec := client.TableSpec{
		Table: fmt.Sprintf("fluss.bench_narrow_%d", rep), Columns: benchdata.NarrowColumns,
		Options: map[string]string{"bucket.num": "4"},
	}
	return e.appendToNewTable(ctx, "narrow", spec, benchNarrowBatches)
}

func benchNarrowStoredNote(e *benchEnv, r *benchResult) {
	r.StoredBytes = e.stored["narrow"]
	r.Notes += fmt.Sprintf("; stored %.1f MB (%.3f of the Arrow data)", float64(r.StoredBytes)/1e6, float64(r.StoredBytes)/float64(e.narrowData().Bytes))
}

// benchNarrowLoad makes sure the narrow table exists.
func benchNarrowLoad(ctx context.Context, e *benchEnv) error {
	if _, ok := e.tables["narrow"]; ok {
		return nil
	}
	_, err := benchNarrowAppend(ctx, e, 0)
	return err
}

// benchNarrowScan scans the narrow table asking for batches compressed with
// wire ("": as stored).
func benchNarrowScan(wire string) func(context.Context, *benchEnv, int) (benchSample, error) {
	return func(ctx context.Context, e *benchEnv, _ int) (benchSample, error) {
		return benchScan(ctx, e.fg, client.ScanRequest{Table: e.tables["narrow"].name, Compression: wire}, e.narrowData().Rows)
	}
}

// appendToNewTable creates a table of spec, appends data's batches to it,
// timed, and keeps it as the table of key.
func (e *benchEnv) appendToNewTable(ctx context.Context, key string, spec client.TableSpec, data func(*benchEnv) ([]arrow.RecordBatch, int64, int64)) (benchSample, error) {
	recs, rows, bytes := data(e)
	info, err := e.fg.CreateTable(ctx, spec, false)
	if err != nil {
		return benchSample{}, err
	}
	t := benchTable{name: info.Table, id: info.TableID}
	start := time.Now()
	if err := benchWrite(ctx, e.fg, t.name, recs); err != nil {
		return benchSample{}, err
	}
	s := benchSample{rows: rows, bytes: bytes, d: time.Since(start)}
	return s, e.keepEventTable(ctx, key, t)
}

// keepEventTable makes t, holding the events, the event table of its
// compression, dropping the one before.
func (e *benchEnv) keepEventTable(ctx context.Context, compression string, t benchTable) error {
	size, err := benchdata.DirSize(e.tableDir(t.id))
	if err != nil {
		return err
	}
	if old, ok := e.tables[compression]; ok && old != t {
		if err := e.fg.DropTable(ctx, old.name, true); err != nil {
			return err
		}
	}
	e.tables[compression] = t
	e.stored[compression] = size
	return nil
}

// benchLoadEvents makes sure the event tables of the compressions exist.
func benchLoadEvents(compressions ...string) func(context.Context, *benchEnv) error {
	return func(ctx context.Context, e *benchEnv) error {
		for _, compression := range compressions {
			if _, ok := e.tables[compression]; ok {
				continue
			}
			spec := benchEventSpec("fluss.bench_events_"+compression, compression)
			if _, err := e.appendToNewTable(ctx, compression, spec, benchEventBatches); err != nil {
				return err
			}
		}
		return nil
	}
}

func benchStoredNote(compression string) func(*benchEnv, *benchResult) {
	return func(e *benchEnv, r *benchResult) {
		r.StoredBytes = e.stored[compression]
		r.Notes += fmt.Sprintf("; stored %.1f MB", float64(r.StoredBytes)/1e6)
		if none := e.stored["none"]; compression != "none" && none > 0 {
			r.Notes += fmt.Sprintf(" (%.3f of none)", float64(r.StoredBytes)/float64(none))
		}
	}
}

// benchRead reads a stream to its end and counts its rows and bytes.
func benchRead(s client.RecordStream) (rows, bytes int64, err error) {
	defer s.Release()
	for s.Next() {
		rec := s.RecordBatch()
		rows += rec.NumRows()
		bytes += util.TotalRecordSize(rec)
	}
	return rows, bytes, s.Err()
}

func benchMemoryScan(ctx context.Context, e *benchEnv, _ int) (benchSample, error) {
	ev := e.eventData()
	cl, err := e.baseline()
	if err != nil {
		return benchSample{}, err
	}
	start := time.Now()
	st, err := cl.ReadTicket(ctx, []byte("events"))
	if err != nil {
		return benchSample{}, err
	}
	rows, bytes, err := benchRead(st)
	if err == nil && rows != ev.rows {
		err = fmt.Errorf("in-memory DoGet sent %d rows, want %d", rows, ev.rows)
	}
	return benchSample{rows: rows, bytes: bytes, d: time.Since(start)}, err
}

// benchScan scans req to its end and checks that it returns wantRows rows.
func benchScan(ctx context.Context, cl *client.Client, req client.ScanRequest, wantRows int64) (benchSample, error) {
	start := time.Now()
	sc, err := cl.Scan(ctx, req)
	if err != nil {
		return benchSample{}, err
	}
	rows, bytes, err := benchRead(sc)
	d := time.Since(start)
	if err == nil && rows != wantRows {
		err = fmt.Errorf("scan of %s returned %d rows, want %d", req.Table, rows, wantRows)
	}
	return benchSample{rows: rows, bytes: bytes, d: d}, err
}

// benchTableScan scans columns (nil: all) of the event table of compression,
// asking for batches compressed with wire ("": none).
func benchTableScan(compression, wire string, columns []string) func(context.Context, *benchEnv, int) (benchSample, error) {
	return func(ctx context.Context, e *benchEnv, _ int) (benchSample, error) {
		ev := e.eventData()
		return benchScan(ctx, e.fg, client.ScanRequest{Table: e.tables[compression].name, Columns: columns, Compression: wire}, ev.rows)
	}
}

func benchFilterRequest(e *benchEnv) client.ScanRequest {
	ev := e.eventData()
	return client.ScanRequest{
		Table:  e.tables["none"].name,
		Filter: json.RawMessage(fmt.Sprintf(`{"and": [{"ge": ["ts", %d]}, {"lt": ["ts", %d]}]}`, ev.lo, ev.hi)),
	}
}

// benchFilterPrepare loads the table and checks the filter's row count once.
func benchFilterPrepare(ctx context.Context, e *benchEnv) error {
	if err := benchLoadEvents("none")(ctx, e); err != nil {
		return err
	}
	_, err := benchScan(ctx, e.fg, benchFilterRequest(e), e.eventData().matching)
	return err
}

// benchFilterScan runs the filtered scan; its rows are the table's rows (the
// rows the scan covers), so that the ratio is the speed-up.
func benchFilterScan(ctx context.Context, e *benchEnv, _ int) (benchSample, error) {
	s, err := benchScan(ctx, e.fg, benchFilterRequest(e), e.eventData().matching)
	s.rows = e.eventData().rows
	return s, err
}

func benchFilterNote(e *benchEnv, r *benchResult) {
	ev := e.eventData()
	r.Notes = fmt.Sprintf("ts in a %.1f s range: %s rows (%.2f %%), table without compression; rows/s counts the table's rows",
		float64(ev.hi-ev.lo)/1000, benchInt(ev.matching), 100*float64(ev.matching)/float64(ev.rows))
	// Bytes the server read from the log for one scan of each kind.
	ctx, table := context.Background(), e.tables["none"].name
	read := func(req client.ScanRequest, rows int64) int64 {
		before, err := e.srv.Engine().LogBytesRead(table)
		if err == nil {
			_, err = benchScan(ctx, e.fg, req, rows)
		}
		after, _ := e.srv.Engine().LogBytesRead(table)
		if err != nil {
			return 0
		}
		return after - before
	}
	all := read(client.ScanRequest{Table: table}, ev.rows)
	some := read(benchFilterRequest(e), ev.matching)
	if all > 0 && some > 0 {
		r.Notes += fmt.Sprintf("; log bytes read %.1f MB vs %.1f MB unfiltered (%.0fx fewer)", float64(some)/1e6, float64(all)/1e6, float64(all)/float64(some))
	}
}

// Lookups.

// benchPebble* are the table ids of the raw pebble baselines.
const (
	benchPebbleKV   = 1
	benchPebbleDict = 2
	benchPebbleAgg  = 3
)

// benchKV is the state of the lookup workloads: a table of keys 0..keys-1
// (BIGINT key, STRING value, 4 buckets) on the server and the same rows in
// the raw pebble store, the keys each run looks up, and the new keys each
// run inserts.
type benchKV struct {
	table, dict   string
	perRun        int
	lookups       [][]arrow.RecordBatch // per run: key batches
	lookupKeys    [][][]byte            // per run: the same keys, bucketed and encoded for pebble
	inserts       [][]arrow.RecordBatch // per run: new keys
	insertKeys    [][][]byte
	insertKeyVals [][]int64
	nextID        int64 // the pebble baseline's auto-increment
}

// benchLookupsPerRun is how many keys a lookup run looks up: a fifth of the
// keys, in whole batches, at most 200,000.
func benchLookupsPerRun(keys int) int {
	n := min(keys/5, 200_000) / benchdata.LookupBatch * benchdata.LookupBatch
	return max(n, benchdata.LookupBatch)
}

func benchKVPrepare(ctx context.Context, e *benchEnv) error {
	if e.kvState != nil {
		return nil
	}
	st := &benchKV{table: "fluss.bench_kv", dict: "fluss.bench_dict", perRun: benchLookupsPerRun(e.cfg.keys)}
	info, err := e.fg.CreateTable(ctx, benchdata.KVTable(st.table, 4), false)
	if err != nil {
		return err
	}
	schema, err := info.ArrowSchema()
	if err != nil {
		return err
	}
	keySchema := arrow.NewSchema(schema.Fields()[:1], nil)
	assign, err := bucketing.NewAssigner(keySchema, []int{0}, 4)
	if err != nil {
		return err
	}
	// encode returns the pebble keys of a key batch, bucketed as the server
	// buckets them.
	encode := func(rec arrow.RecordBatch, table int64) ([][]byte, error) {
		buckets := assign.Assign(rec, nil)
		keys := rec.Column(0).(*array.Int64)
		out := make([][]byte, rec.NumRows())
		for i := range out {
			pk, err := row.EncodeKey(nil, []arrow.DataType{arrow.PrimitiveTypes.Int64}, []any{keys.Value(i)})
			if err != nil {
				return nil, err
			}
			out[i] = kv.RowKey(nil, table, int(buckets[i]), pk)
		}
		return out, nil
	}
	store, err := e.pebbleStore()
	if err != nil {
		return err
	}
	// Load keys 0..keys-1 into the table and into pebble.
	valueTypes := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String}
	var recs []arrow.RecordBatch
	for from := 0; from < e.cfg.keys; from += e.cfg.batchRows {
		rec := benchdata.KVBatch(schema, from, min(from+e.cfg.batchRows, e.cfg.keys))
		recs = append(recs, rec)
		keyRec := array.NewRecordBatch(keySchema, rec.Columns()[:1], rec.NumRows())
		pks, err := encode(keyRec, benchPebbleKV)
		keyRec.Release()
		if err != nil {
			return err
		}
		txn := store.NewTxn()
		for i, pk := range pks {
			k := int64(from + i)
			if err := txn.Set(pk, row.Encode(nil, 1, valueTypes, row.Row{k, benchdata.KeyValue(k)})); err != nil {
				txn.Abort()
				return err
			}
		}
		if err := txn.Commit(); err != nil {
			return err
		}
	}
	err = benchWrite(ctx, e.fg, st.table, recs)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		return err
	}
	// The dictionary of insert-if-not-exists.
	if _, err := e.fg.CreateTable(ctx, client.TableSpec{
		Table: st.dict, PrimaryKey: []string{"k"},
		Columns: []client.Column{{Name: "k", Type: "BIGINT"}, {Name: "id", Type: "BIGINT"}},
		Options: map[string]string{"auto-increment.fields": "id", "bucket.num": "4"},
	}, false); err != nil {
		return err
	}
	// The keys of each run: random existing keys to look up, and new,
	// well-spread keys to insert (the same for fluxgate and the baseline).
	rng := rand.New(rand.NewPCG(1, 2))
	seq := uint64(0)
	for range e.cfg.reps {
		var lookups, inserts []arrow.RecordBatch
		var lookupKeys, insertKeys [][]byte
		var insertVals []int64
		for range st.perRun / benchdata.LookupBatch {
			keys := make([]int64, benchdata.LookupBatch)
			for j := range keys {
				keys[j] = rng.Int64N(int64(e.cfg.keys))
			}
			rec := benchdata.KeyBatch(keySchema, keys)
			pks, err := encode(rec, benchPebbleKV)
			if err != nil {
				return err
			}
			lookups, lookupKeys = append(lookups, rec), append(lookupKeys, pks...)
			for j := range keys {
				keys[j] = benchSplitmix(seq)
				seq++
			}
			rec = benchdata.KeyBatch(keySchema, keys)
			if pks, err = encode(rec, benchPebbleDict); err != nil {
				return err
			}
			inserts, insertKeys = append(inserts, rec), append(insertKeys, pks...)
			insertVals = append(insertVals, keys...)
		}
		st.lookups, st.lookupKeys = append(st.lookups, lookups), append(st.lookupKeys, lookupKeys)
		st.inserts, st.insertKeys = append(st.inserts, inserts), append(st.insertKeys, insertKeys)
		st.insertKeyVals = append(st.insertKeyVals, insertVals)
	}
	e.kvState = st
	return nil
}

// benchPebbleGets gets the run's keys (already bucketed and encoded) one by
// one, a transaction per batch, as engine.BenchmarkPointLookup's baseline.
func benchPebbleGets(_ context.Context, e *benchEnv, rep int) (benchSample, error) {
	st := e.kvState
	keys := st.lookupKeys[rep]
	var bytes int64
	start := time.Now()
	for from := 0; from < len(keys); from += benchdata.LookupBatch {
		txn := e.pebble.NewTxn()
		for _, k := range keys[from : from+benchdata.LookupBatch] {
			v, ok, err := txn.Get(k)
			if err != nil || !ok {
				txn.Abort()
				return benchSample{}, fmt.Errorf("pebble get: found %v, %v", ok, err)
			}
			bytes += int64(len(k) + len(v))
		}
		txn.Abort()
	}
	return benchSample{rows: int64(len(keys)), bytes: bytes, d: time.Since(start)}, nil
}

// benchLookups sends the batches over one DoExchange stream, window batches
// in flight, and checks that every key has one row.
func benchLookups(ctx context.Context, cl *client.Client, req client.LookupRequest, batches []arrow.RecordBatch) (benchSample, error) {
	l, err := cl.Lookup(ctx, req)
	if err != nil {
		return benchSample{}, err
	}
	defer l.Close()
	start := time.Now()
	rows, bytes, err := benchdata.PipelineLookups(l, batches)
	if err != nil {
		return benchSample{}, fmt.Errorf("lookup in %s: %w", req.Table, err)
	}
	return benchSample{rows: rows, bytes: bytes, d: time.Since(start)}, nil
}

func benchPointLookups(ctx context.Context, e *benchEnv, rep int) (benchSample, error) {
	return benchLookups(ctx, e.fg, client.LookupRequest{Table: e.kvState.table}, e.kvState.lookups[rep])
}

func benchInsertIfNotExists(ctx context.Context, e *benchEnv, rep int) (benchSample, error) {
	return benchLookups(ctx, e.fg, client.LookupRequest{Table: e.kvState.dict, InsertIfNotExists: true}, e.kvState.inserts[rep])
}

// benchPebbleInserts does what insert-if-not-exists does to the state, in
// raw pebble: for each new key a get (a miss) and a set of (key, id), one
// transaction per batch.
func benchPebbleInserts(_ context.Context, e *benchEnv, rep int) (benchSample, error) {
	st := e.kvState
	keys, vals := st.insertKeys[rep], st.insertKeyVals[rep]
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64}
	var bytes int64
	start := time.Now()
	for from := 0; from < len(keys); from += benchdata.LookupBatch {
		txn := e.pebble.NewTxn()
		for i := from; i < from+benchdata.LookupBatch; i++ {
			_, ok, err := txn.Get(keys[i])
			if err != nil || ok {
				txn.Abort()
				return benchSample{}, fmt.Errorf("pebble get of a new key: found %v, %v", ok, err)
			}
			st.nextID++
			v := row.Encode(nil, 1, types, row.Row{vals[i], st.nextID})
			if err := txn.Set(keys[i], v); err != nil {
				txn.Abort()
				return benchSample{}, err
			}
			bytes += int64(len(keys[i]) + len(v))
		}
		if err := txn.Commit(); err != nil {
			return benchSample{}, err
		}
	}
	return benchSample{rows: int64(len(keys)), bytes: bytes, d: time.Since(start)}, nil
}

// Upserts into an aggregation table.

// benchAgg is the state of the upsert workload.
type benchAgg struct {
	table string
	recs  []arrow.RecordBatch
	rows  int64
	bytes int64
}

func benchAggPrepare(ctx context.Context, e *benchEnv) error {
	info, err := e.fg.CreateTable(ctx, client.TableSpec{
		Table:      "fluss.bench_agg",
		Columns:    []client.Column{{Name: "k", Type: "BIGINT"}, {Name: "n", Type: "BIGINT"}, {Name: "bm", Type: "BYTES"}},
		PrimaryKey: []string{"k"},
		Options:    map[string]string{"table.merge-engine": "aggregation", "fields.n.agg": "sum", "fields.bm.agg": "rbm32"},
	}, false)
	if err != nil {
		return err
	}
	schema, err := info.ArrowSchema()
	if err != nil {
		return err
	}
	if _, err := e.pebbleStore(); err != nil {
		return err
	}
	st := &benchAgg{table: info.Table, recs: benchAggBatches(schema, e.cfg.keys, e.cfg.batchRows), rows: int64(e.cfg.keys)}
	for _, r := range st.recs {
		st.bytes += util.TotalRecordSize(r)
	}
	e.agg = st
	return nil
}

// benchPebbleAggWrites writes the same keys and values blindly into pebble,
// a transaction per batch, as engine.BenchmarkAggregateUpsert's baseline.
func benchPebbleAggWrites(_ context.Context, e *benchEnv, _ int) (benchSample, error) {
	st := e.agg
	var bytes int64
	start := time.Now()
	for _, r := range st.recs {
		txn := e.pebble.NewTxn()
		keys := r.Column(0).(*array.Int64)
		bms := r.Column(2).(*array.Binary)
		for i := range int(r.NumRows()) {
			key := kv.RowKey(nil, benchPebbleAgg, 0, binary.BigEndian.AppendUint64(nil, uint64(keys.Value(i))))
			val := binary.LittleEndian.AppendUint64(append([]byte{1, 3, 0}, bms.Value(i)...), 1)
			if err := txn.Set(key, val); err != nil {
				txn.Abort()
				return benchSample{}, err
			}
			bytes += int64(len(key) + len(val))
		}
		if err := txn.Commit(); err != nil {
			return benchSample{}, err
		}
	}
	return benchSample{rows: st.rows, bytes: bytes, d: time.Since(start)}, nil
}

func benchAggUpserts(ctx context.Context, e *benchEnv, _ int) (benchSample, error) {
	st := e.agg
	start := time.Now()
	if err := benchWrite(ctx, e.fg, st.table, st.recs); err != nil {
		return benchSample{}, err
	}
	return benchSample{rows: st.rows, bytes: st.bytes, d: time.Since(start)}, nil
}
