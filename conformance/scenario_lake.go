package conformance

// lake-union-read (PROTOCOL.md §7): fact_lake(dim_a, dim_b, metric, ts,
// PK (dim_a, dim_b), bucket.key dim_a, datalake enabled). Write, tier, write
// more: SELECT dim_a, SUM(metric) GROUP BY dim_a over the table equals the
// same over everything written, and over fact_lake$lake it lags by exactly
// what was written after the round. Then the scheduler, at freshness 1s,
// brings the lake up to date by itself. The same for a log table, and (in
// lake-union-read-after-ttl) after table.log.ttl removed tiered segments.

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
)

const (
	lakeDimA    = 6
	lakeDimB    = 40
	lakeBatches = 8
	lakeRows    = 200 // per batch
	lakeTTLRows = 3000
)

func lakeSpec(name string, pk bool, opts map[string]string) client.TableSpec {
	spec := client.TableSpec{
		Table: name,
		Columns: []client.Column{
			{Name: "dim_a", Type: "STRING", Nullable: new(false)}, {Name: "dim_b", Type: "STRING", Nullable: new(false)},
			{Name: "metric", Type: "BIGINT"}, {Name: "ts", Type: "BIGINT"},
		},
		Options: map[string]string{"bucket.key": "dim_a", "bucket.num": "3",
			"table.datalake.enabled": "true", "table.datalake.freshness": "1h"},
	}
	if pk {
		spec.PrimaryKey = []string{"dim_a", "dim_b"}
	}
	maps.Copy(spec.Options, opts)
	return spec
}

// lakeFacts is what was written to a fact table, to compute the expected
// sums: every row for a log table, the latest row per key for a
// primary-key table.
type lakeFacts struct {
	pk   bool
	size int              // rows per batch
	rows map[string][]any // by key (primary key) or by insertion number (log)
	n    int
}

func (f *lakeFacts) sums() map[string]int64 {
	out := map[string]int64{}
	for _, r := range f.rows {
		out[r[0].(string)] += r[2].(int64)
	}
	return out
}

// write writes batches of random rows; on a primary-key table some rows are
// deletes, sent as their own write.
func (f *lakeFacts) write(ctx context.Context, env *Env, rng *rand.Rand, t *pkTable, batches int) error {
	all := []string{"dim_a", "dim_b", "metric", "ts"}
	for range batches {
		var upserts, deletes pkBatch
		for range f.size {
			r := []any{fmt.Sprintf("a%d", rng.IntN(lakeDimA)), fmt.Sprintf("b%d", rng.IntN(lakeDimB)), int64(rng.IntN(1000)), time.Now().UnixMilli()}
			if f.pk && rng.IntN(10) == 0 {
				deletes = append(deletes, r[:2])
				continue
			}
			upserts = append(upserts, r)
		}
		// The upserts are written first, the deletes after them.
		for _, r := range upserts {
			key := r[0].(string) + "," + r[1].(string)
			if !f.pk {
				key = fmt.Sprint(f.n)
				f.n++
			}
			f.rows[key] = r
		}
		for _, d := range deletes {
			delete(f.rows, d[0].(string)+","+d[1].(string))
		}
		if _, err := writeRows(ctx, env, t, client.WriteRequest{Table: t.name}, all, upserts); err != nil {
			return err
		}
		if len(deletes) > 0 {
			if _, err := writeRows(ctx, env, t, client.WriteRequest{Table: t.name, Mode: client.ModeDelete}, all[:2], deletes); err != nil {
				return err
			}
		}
	}
	return nil
}

// sumByDimA reads a table or view and sums metric by dim_a.
func sumByDimA(ctx context.Context, env *Env, table string) (map[string]int64, *client.ScanPlan, error) {
	plan, err := env.Client.Plan(ctx, client.ScanRequest{Table: table, Columns: []string{"dim_a", "metric"}})
	if err != nil {
		return nil, nil, fmt.Errorf("plan %s: %w", table, err)
	}
	s := env.Client.ScanPlanned(ctx, plan)
	defer s.Release()
	out := map[string]int64{}
	for s.Next() {
		rec := s.RecordBatch()
		a, m := rec.Column(0).(*array.String), rec.Column(1).(*array.Int64)
		for i := range a.Len() {
			out[a.Value(i)] += m.Value(i)
		}
	}
	if err := s.Err(); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", table, err)
	}
	return out, plan, nil
}

func equalSums(what string, got, want map[string]int64) error {
	for k := range want {
		if want[k] == 0 {
			delete(want, k)
		}
	}
	for k := range got {
		if got[k] == 0 {
			delete(got, k)
		}
	}
	if maps.Equal(got, want) {
		return nil
	}
	return fmt.Errorf("%s: SUM(metric) GROUP BY dim_a = %s, want %s", what, fmtSums(got), fmtSums(want))
}

func fmtSums(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func lakeUnionRead(ctx context.Context, env *Env) error {
	seed := scenarioSeed()
	for _, pk := range []bool{true, false} {
		name := "fact_lake"
		if !pk {
			name = "fact_lake_log"
		}
		if err := lakeRoundTrip(ctx, env, rand.New(rand.NewPCG(uint64(seed), 7)), lakeSpec(env.Table(name), pk, nil), false); err != nil {
			return fmt.Errorf("%w (seed %d: rerun with CONFORMANCE_SEED=%d)", err, seed, seed)
		}
	}
	return nil
}

func lakeUnionReadAfterTTL(ctx context.Context, env *Env) error {
	if err := env.needsRetention(); err != nil {
		return err
	}
	seed := scenarioSeed()
	spec := lakeSpec(env.Table("fact_lake_ttl"), false, map[string]string{"table.log.ttl": "1s"})
	if err := lakeRoundTrip(ctx, env, rand.New(rand.NewPCG(uint64(seed), 8)), spec, true); err != nil {
		return fmt.Errorf("%w (seed %d: rerun with CONFORMANCE_SEED=%d)", err, seed, seed)
	}
	return nil
}

func lakeRoundTrip(ctx context.Context, env *Env, rng *rand.Rand, spec client.TableSpec, ttl bool) error {
	t, err := newPKTable(spec)
	if err != nil {
		return err
	}
	if _, err := createTable(ctx, env, spec); err != nil {
		return err
	}
	_, err = env.Client.Plan(ctx, client.ScanRequest{Table: t.name + "$lake"})
	if err := wantCode(t.name+"$lake before any round", err, codes.NotFound); err != nil {
		return err
	}
	facts := &lakeFacts{pk: len(spec.PrimaryKey) > 0, size: lakeRows, rows: map[string][]any{}}
	if ttl {
		facts.size = lakeTTLRows // enough for tiered segments to roll
	}
	if err := facts.write(ctx, env, rng, t, lakeBatches); err != nil {
		return err
	}
	snap, err := env.Client.TierNow(ctx, t.name)
	if err != nil {
		return fmt.Errorf("tier-now %s: %w", t.name, err)
	}
	inLake := facts.sums()
	if err := facts.write(ctx, env, rng, t, lakeBatches/2); err != nil {
		return err
	}

	if ttl {
		// Wait for retention to remove tiered segments of some bucket.
		if err := waitExpired(ctx, env, t.name); err != nil {
			return err
		}
	}
	got, plan, err := sumByDimA(ctx, env, t.name)
	if err != nil {
		return err
	}
	if err := equalSums(t.name+" (every row written)", got, facts.sums()); err != nil {
		return err
	}
	if !facts.pk && (plan.Meta.LakeSnapshotID == nil || *plan.Meta.LakeSnapshotID != snap.SnapshotID) {
		return fmt.Errorf("%s: a union read's FlightInfo has lake_snapshot_id %v, want %d (tier-now's)", t.name, plan.Meta.LakeSnapshotID, snap.SnapshotID)
	}
	if got, _, err = sumByDimA(ctx, env, t.name+"$lake"); err != nil {
		return err
	}
	if err := equalSums(t.name+"$lake (the rows written before tier-now)", got, inLake); err != nil {
		return err
	}

	// At freshness 1s the scheduler tiers the rest by itself.
	if _, err := env.Client.AlterTable(ctx, client.AlterRequest{Table: t.name, Set: map[string]string{"table.datalake.freshness": "1s"}}); err != nil {
		return err
	}
	hw, err := env.Client.ListOffsets(ctx, t.name, client.Latest, nil)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		s, err := env.Client.LakeSnapshot(ctx, t.name)
		if err != nil {
			return err
		}
		if caughtUp(hw, s.Offsets) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: 15 s after freshness was set to 1s the lake holds offsets %v, want the high watermarks %v", t.name, s.Offsets, hw)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got, _, err = sumByDimA(ctx, env, t.name+"$lake"); err != nil {
		return err
	}
	return equalSums(t.name+"$lake once the scheduler caught up", got, facts.sums())
}

func caughtUp(hw, lake map[int]int64) bool {
	for b, o := range hw {
		if lake[b] < o {
			return false
		}
	}
	return true
}

// waitExpired waits until the server's log retention has removed segments of
// a table, and fails when it does not within 15 s.
func waitExpired(ctx context.Context, env *Env, table string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		earliest, err := env.Client.ListOffsets(ctx, table, client.Earliest, nil)
		if err != nil {
			return err
		}
		for _, o := range earliest {
			if o > 0 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: the server removed no log segment of a table with table.log.ttl 1s within 15 s (retention interval %s)", table, env.RetentionInterval)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
