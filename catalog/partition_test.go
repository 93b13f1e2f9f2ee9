package catalog

import (
	"strings"
	"testing"

	"github.com/fluxgate-io/fluxgate/errs"
)

func partitionedSpec(name string, pk []string, partKeys []string, opts map[string]string) TableSpec {
	return TableSpec{Table: name, Columns: []Column{
		{Name: "id", Type: "BIGINT"}, {Name: "dt", Type: "STRING"}, {Name: "region", Type: "STRING"},
		{Name: "v", Type: "DOUBLE"}, {Name: "tags", Type: "ARRAY<INT>"}, {Name: "amount", Type: "DECIMAL(10,2)"},
	}, PrimaryKey: pk, PartitionKeys: partKeys, Options: opts}
}

// TestPartitionKeysValidation checks each of Fluss's partition key rules
// with its message.
func TestPartitionKeysValidation(t *testing.T) {
	tests := []struct {
		name string
		spec TableSpec
		want string // "" for valid
	}{
		{"log table", partitionedSpec("t", nil, []string{"dt", "region"}, nil), ""},
		{"pk table", partitionedSpec("t", []string{"id", "region"}, []string{"region"}, nil), ""},
		{"missing column", partitionedSpec("t", nil, []string{"day"}, nil), "Partition key 'day' does not exist in the schema."},
		{"not in pk", partitionedSpec("t", []string{"id"}, []string{"dt"}, nil),
			"Partitioned Primary Key Table requires partition key [dt] is a subset of the primary key [id]."},
		{"pk all partition", partitionedSpec("t", []string{"dt"}, []string{"dt"}, nil),
			"Primary Key constraint [dt] should not be same with partition fields [dt]."},
		{"type array", partitionedSpec("t", nil, []string{"tags"}, nil),
			"Currently, partitioned table supported partition key type are [CHAR, STRING, BOOLEAN, BINARY, BYTES, TINYINT, SMALLINT, INTEGER, DATE, TIME_WITHOUT_TIME_ZONE, BIGINT, FLOAT, DOUBLE, TIMESTAMP_WITHOUT_TIME_ZONE, TIMESTAMP_WITH_LOCAL_TIME_ZONE], but got partition key 'tags' with data type ARRAY<INT>."},
		{"type decimal", partitionedSpec("t", nil, []string{"amount"}, nil), "but got partition key 'amount' with data type DECIMAL(10,2)."},
		{"twice", partitionedSpec("t", nil, []string{"dt", "dt"}, nil), `partition key "dt" is listed twice`},
		{"bucket key has partition key", partitionedSpec("t", nil, []string{"dt"}, map[string]string{"bucket.key": "id,dt"}),
			"Bucket key [id, dt] shouldn't include any column in partition keys [dt]."},
		{"pk bucket key has partition key", partitionedSpec("t", []string{"id", "region"}, []string{"region"}, map[string]string{"bucket.key": "region"}),
			"Bucket key [region] shouldn't include any column in partition keys [region]."},
	}
	for _, tt := range tests {
		_, err := NormalizeSpec(tt.spec, Defaults{})
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if errs.KindOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "fluss.t") {
			t.Errorf("%s: got %v, want INVALID_ARGUMENT naming fluss.t with %q", tt.name, err, tt.want)
		}
	}
}

// TestPartitionedPrimaryKeyDefaults checks that a partitioned primary-key
// table's default bucket key, physical key and prefix index leave out the
// partition keys, as Fluss's do.
func TestPartitionedPrimaryKeyDefaults(t *testing.T) {
	info, err := NormalizeSpec(partitionedSpec("t", []string{"region", "id", "dt"}, []string{"region"}, map[string]string{"bucket.key": "id"}), Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	if got := info.PhysicalKeyIndexes(); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Errorf("physical key indexes %v, want [0 1] (id, dt)", got)
	}
	if !info.HasPrefixIndex() {
		t.Error("bucket key id is a strict prefix of the physical key (id, dt): want a prefix index")
	}
	def, err := NormalizeSpec(partitionedSpec("t", []string{"id", "region"}, []string{"region"}, nil), Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	if got := def.Option(OptBucketKey); got != "id" {
		t.Errorf("default bucket key %q, want id", got)
	}
	if !def.IsPartitioned() || len(def.PartitionKeyIndexes()) != 1 || def.PartitionKeyIndexes()[0] != 2 {
		t.Errorf("partition key indexes %v, want [2]", def.PartitionKeyIndexes())
	}
}

func TestPartitions(t *testing.T) {
	dir := t.TempDir()
	c := openTest(t, dir, Options{MaxPartitions: 2})
	path := mustPath(t, "t")
	info, _, err := c.CreateTable(partitionedSpec("t", nil, []string{"dt", "region"}, nil), false)
	if err != nil {
		t.Fatal(err)
	}
	eu := map[string]string{"dt": "20261201", "region": "eu"}
	p, created, err := c.CreatePartition(path, eu, false)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if p.PartitionName != "20261201$eu" || p.PartitionID <= info.TableID || p.TableID != info.TableID {
		t.Errorf("partition %+v of table id %d", p.PartitionInfo, info.TableID)
	}
	_, _, err = c.CreatePartition(path, eu, false)
	wantKind(t, "create again", err, errs.AlreadyExists)
	if again, created, err := c.CreatePartition(path, eu, true); err != nil || created || again.PartitionID != p.PartitionID {
		t.Errorf("create if not exists: %v %v %v", again, created, err)
	}
	for name, spec := range map[string]map[string]string{
		"missing key":     {"dt": "20261201"},
		"unknown key":     {"dt": "20261201", "zone": "eu"},
		"bad character":   {"dt": "2026.12.01", "region": "eu"},
		"reserved prefix": {"dt": "__x", "region": "eu"},
	} {
		_, _, err := c.CreatePartition(path, spec, false)
		wantKind(t, name, err, errs.InvalidArgument)
	}
	if _, _, err := c.CreatePartition(path, map[string]string{"dt": "20261202", "region": "eu"}, false); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.CreatePartition(path, map[string]string{"dt": "20261203", "region": "eu"}, false)
	wantKind(t, "over the limit", err, errs.ResourceExhausted)
	if err != nil && !strings.Contains(err.Error(), "max.partition.num is 2") {
		t.Errorf("limit error %q does not name the limit", err)
	}

	_, _, err = c.CreatePartition(mustPath(t, "plain"), eu, false)
	wantKind(t, "missing table", err, errs.NotFound)
	if _, _, err := c.CreateTable(simpleSpec("plain"), false); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.CreatePartition(mustPath(t, "plain"), eu, false)
	wantKind(t, "not partitioned", err, errs.FailedPrecondition)

	// Restart: the partitions and the id sequence are kept.
	c.Close()
	c = openTest(t, dir, Options{})
	parts := c.Partitions(info.TableID)
	if len(parts) != 2 || parts[0].PartitionName != "20261201$eu" || parts[1].PartitionName != "20261202$eu" {
		t.Fatalf("after restart: %v", parts)
	}
	if got := parts[0].Values(); len(got) != 2 || got[1] != "eu" {
		t.Errorf("values %v", got)
	}
	if byID, err := c.PartitionByID(p.PartitionID); err != nil || byID.PartitionName != p.PartitionName {
		t.Errorf("by id: %v %v", byID, err)
	}

	dropped, err := c.DropPartition(path, eu, false)
	if err != nil || dropped.PartitionID != p.PartitionID {
		t.Fatalf("drop: %v %v", dropped, err)
	}
	_, err = c.DropPartition(path, eu, false)
	wantKind(t, "drop again", err, errs.NotFound)
	if err != nil && !strings.Contains(err.Error(), "partition dt=20261201/region=eu of table fluss.t does not exist") {
		t.Errorf("not found message %q", err)
	}
	if gone, err := c.DropPartition(path, eu, true); gone != nil || err != nil {
		t.Errorf("drop if exists: %v %v", gone, err)
	}
	recreated, _, err := c.CreatePartition(path, eu, false)
	if err != nil || recreated.PartitionID <= p.PartitionID {
		t.Errorf("re-created partition %v (%v): want a new id above %d", recreated, err, p.PartitionID)
	}
	_, err = c.PartitionByID(p.PartitionID)
	wantKind(t, "dropped id", err, errs.NotFound)

	if _, err := c.DropTable(path, false); err != nil {
		t.Fatal(err)
	}
	if got := c.Partitions(info.TableID); len(got) != 0 {
		t.Errorf("partitions of a dropped table: %v", got)
	}
	c.Close()
	c = openTest(t, dir, Options{})
	if got := c.Partitions(info.TableID); len(got) != 0 {
		t.Errorf("partitions of a dropped table after restart: %v", got)
	}
}
