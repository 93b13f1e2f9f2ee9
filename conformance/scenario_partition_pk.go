package conformance

// partition-pk (PROTOCOL.md "Partitioned tables", §4.5, §5, §6, undo): a
// primary-key table orders(region, id, amount) partitioned by region. Upserts
// of three regions in one batch land in their partitions, and $changelog
// names each change's partition; point lookups are routed by the keys' region (a region without a partition gives no row, as
// in Fluss); undo of one partition restores its rows and leaves the others;
// list-offsets and the PutResults agree per partition.

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/fluxgate-io/fluxgate/client"
)

var partRegions = []string{"ap", "eu", "us"}

func partitionPK(ctx context.Context, env *Env) error {
	spec := client.TableSpec{
		Table: env.Table("part_orders"),
		Columns: []client.Column{
			{Name: "region", Type: "STRING", Nullable: new(false)},
			{Name: "id", Type: "BIGINT", Nullable: new(false)},
			{Name: "amount", Type: "BIGINT"},
		},
		PrimaryKey:    []string{"region", "id"},
		PartitionKeys: []string{"region"},
		Options:       map[string]string{"bucket.num": "2"},
	}
	t, info, err := createPK(ctx, env, spec)
	if err != nil {
		return err
	}
	// Fluss's default bucket key of a partitioned primary-key table: the
	// primary key without the partition keys.
	if got := info.Options["bucket.key"]; got != "id" {
		return fmt.Errorf("describe-table: bucket.key %q, want id (the primary key without the partition key)", got)
	}
	cols := []string{"region", "id", "amount"}
	want := pkState{}
	var first pkBatch
	for _, r := range partRegions {
		for id := range int64(10) {
			row := []any{r, id, id * 10}
			first = append(first, row)
			want[t.keyOf(row)] = row
		}
	}
	res, err := writeRows(ctx, env, t, client.WriteRequest{Table: t.name}, cols, first)
	if err != nil {
		return fmt.Errorf("upsert three regions: %w", err)
	}
	if names := slices.Sorted(maps.Keys(res[0].PartitionOffsets)); !slices.Equal(names, partRegions) {
		return fmt.Errorf("a write to three regions acknowledged partition_offsets of %v, want %v", names, partRegions)
	}
	before, err := env.Client.ListPartitionOffsets(ctx, t.name, client.Latest, nil, nil)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(before, res[0].PartitionOffsets) {
		return fmt.Errorf("list-offsets latest %v, want the write's acknowledged partition_offsets %v", before, res[0].PartitionOffsets)
	}
	if err := checkPKParts(ctx, env, t, want, "after the first upserts"); err != nil {
		return err
	}

	// Update ids 0..4 of eu and us; the same ids of ap stay.
	firstState := maps.Clone(want)
	var second pkBatch
	for _, r := range []string{"eu", "us"} {
		for id := range int64(5) {
			row := []any{r, id, id*10 + 1}
			second = append(second, row)
			want[t.keyOf(row)] = row
		}
	}
	if _, err := writeRows(ctx, env, t, client.WriteRequest{Table: t.name}, cols, second); err != nil {
		return fmt.Errorf("update eu and us: %w", err)
	}
	if err := checkPKParts(ctx, env, t, want, "after the updates"); err != nil {
		return err
	}
	if err := checkChangeKinds(ctx, env, t, map[string]map[string]int{
		"ap": {ctInsert: 10},
		"eu": {ctInsert: 10, ctUpdateBefore: 5, ctUpdateAfter: 5},
		"us": {ctInsert: 10, ctUpdateBefore: 5, ctUpdateAfter: 5},
	}); err != nil {
		return err
	}

	key := func(region string, id int64) string { return t.keyOf([]any{region, id, nil}) }
	keys := [][]any{{"eu", int64(1)}, {"ap", int64(1)}, {"xx", int64(1)}, {"us", int64(4)}, {"eu", int64(99)}, {"us", int64(9)}}
	wantRows := []lookupRow{{0, want[key("eu", 1)]}, {1, want[key("ap", 1)]}, {3, want[key("us", 4)]}, {5, want[key("us", 9)]}}
	got, err := lookupOnce(ctx, env, t, client.LookupRequest{Table: t.name}, t.fields([]string{"region", "id"}), keys)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(got, wantRows) {
		return fmt.Errorf("lookup of %s (region xx has no partition, eu 99 no row): got %v, want %v", abbrevRows(keys), got, wantRows)
	}
	parts, err := env.Client.ListPartitions(ctx, t.name, nil)
	if err != nil {
		return err
	}
	if names := partitionNames(parts); !slices.Equal(names, partRegions) {
		return fmt.Errorf("after a lookup of region xx: partitions %v, want %v (a lookup creates none)", names, partRegions)
	}

	// Undo eu to its offsets before the updates: eu is back to the first
	// upserts, us keeps its updates.
	undo := client.PartitionOffsets{"eu": before["eu"]}
	if _, err := env.Client.UndoPartitions(ctx, t.name, undo); err != nil {
		return fmt.Errorf("undo partition eu to %v: %w", before["eu"], err)
	}
	for k, row := range firstState {
		if row[0] == "eu" {
			want[k] = row
		}
	}
	if err := checkPKParts(ctx, env, t, want, "after undo of partition eu"); err != nil {
		return err
	}
	got, err = lookupOnce(ctx, env, t, client.LookupRequest{Table: t.name}, t.fields([]string{"region", "id"}), keys[:2])
	if err != nil {
		return err
	}
	if wantRows := []lookupRow{{0, firstState[key("eu", 1)]}, {1, want[key("ap", 1)]}}; !reflect.DeepEqual(got, wantRows) {
		return fmt.Errorf("lookup after undo of eu: got %v, want %v", got, wantRows)
	}
	return nil
}

// checkChangeKinds reads t$changelog from the start and compares the number
// of changes of each kind per partition with want.
func checkChangeKinds(ctx context.Context, env *Env, t *pkTable, want map[string]map[string]int) error {
	s, err := env.Client.Scan(ctx, client.ScanRequest{Table: t.changelog(), Columns: []string{changeTypeCol, "region"}, Startup: client.Earliest})
	if err != nil {
		return fmt.Errorf("read %s: %w", t.changelog(), err)
	}
	defer s.Release()
	got := map[string]map[string]int{}
	for s.Next() {
		rec, m := s.RecordBatch(), s.Meta()
		for i := range int(rec.NumRows()) {
			kind, region := cell(rec.Column(0), i), cell(rec.Column(1), i)
			if region != m.Partition {
				return fmt.Errorf("%s: a batch of partition %q holds a change of region %v", t.changelog(), m.Partition, region)
			}
			if got[m.Partition] == nil {
				got[m.Partition] = map[string]int{}
			}
			got[m.Partition][fmt.Sprint(kind)]++
		}
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("read %s: %w", t.changelog(), err)
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("%s: changes per partition and kind %v, want %v", t.changelog(), got, want)
	}
	return nil
}

// checkPKParts reads a partitioned primary-key table by its plain name and
// compares its rows with want; every batch must name the partition of its
// rows (region).
func checkPKParts(ctx context.Context, env *Env, t *pkTable, want pkState, when string) error {
	s, err := env.Client.Scan(ctx, client.ScanRequest{Table: t.name})
	if err != nil {
		return fmt.Errorf("%s: read %s: %w", when, t.name, err)
	}
	defer s.Release()
	got := pkState{}
	for s.Next() {
		rec, m := s.RecordBatch(), s.Meta()
		for i := range int(rec.NumRows()) {
			r := make([]any, rec.NumCols())
			for c := range r {
				r[c] = cell(rec.Column(c), i)
			}
			if r[0] != m.Partition {
				return fmt.Errorf("%s: a batch of partition %q holds row %s", when, m.Partition, fmtRow(r))
			}
			got[t.keyOf(r)] = r
		}
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("%s: read %s: %w", when, t.name, err)
	}
	return equalStates(when, got, want)
}
