package conformance

// partition-bad-input (PROTOCOL.md "Partitioned tables"): bad partition
// definitions, values, options and requests are refused with the code and a
// message naming the culprit, as Fluss refuses them, and leave nothing
// behind.

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
)

func partitionBadInput(ctx context.Context, env *Env) error {
	var wrong []error
	check := func(err error) {
		if err != nil {
			wrong = append(wrong, err)
		}
	}

	// Definitions: each create-table is refused and creates nothing.
	badName := env.Table("part_bad")
	with := func(edit func(*client.TableSpec)) client.TableSpec {
		spec := partSpec(badName, nil)
		spec.Options = maps.Clone(spec.Options)
		edit(&spec)
		return spec
	}
	for _, tc := range []struct {
		what    string
		spec    client.TableSpec
		culprit string
	}{
		{"a partition key that is not a column", with(func(s *client.TableSpec) { s.PartitionKeys = []string{"day"} }), "day"},
		{"a partition key of type DECIMAL", with(func(s *client.TableSpec) {
			s.Columns = append(s.Columns, client.Column{Name: "price", Type: "DECIMAL(10, 2)"})
			s.PartitionKeys = []string{"price"}
		}), "price"},
		{"a bucket key holding the partition key", with(func(s *client.TableSpec) { s.Options["bucket.key"] = "id,dt" }), "dt"},
		{"a primary key without the partition key", with(func(s *client.TableSpec) {
			s.PrimaryKey = []string{"id"}
			delete(s.Options, "bucket.key")
		}), "dt"},
		{"a primary key equal to the partition keys", with(func(s *client.TableSpec) {
			s.PrimaryKey = []string{"dt"}
			delete(s.Options, "bucket.key")
		}), "dt"},
		{"auto partitioning with time unit WEEK", with(func(s *client.TableSpec) {
			s.Options["table.auto-partition.enabled"] = "true"
			s.Options["table.auto-partition.time-unit"] = "WEEK"
		}), "table.auto-partition.time-unit"},
		{"an auto-partition key that is not one of the two partition keys", with(func(s *client.TableSpec) {
			s.PartitionKeys = []string{"dt", "note"}
			s.Options["table.auto-partition.enabled"] = "true"
			s.Options["table.auto-partition.time-unit"] = "DAY"
			s.Options["table.auto-partition.key"] = "id"
		}), "id"},
		{"auto partitioning of a table without partition keys", with(func(s *client.TableSpec) {
			s.PartitionKeys = nil
			s.Options["table.auto-partition.enabled"] = "true"
		}), "table.auto-partition.enabled"},
	} {
		_, err := env.Client.CreateTable(ctx, tc.spec, false)
		check(wantCode(fmt.Sprintf("create-table with %s", tc.what), err, codes.InvalidArgument, tc.culprit))
	}
	if _, err := env.Client.DescribeTable(ctx, badName); err == nil {
		wrong = append(wrong, fmt.Errorf("table %s exists after every create-table of it was refused", badName))
	}

	table := env.Table("part_errors")
	if _, err := createTable(ctx, env, partSpec(table, nil)); err != nil {
		return err
	}
	plain := env.Table("part_errors_plain")
	if _, err := createTable(ctx, env, simpleSpec(plain, 1, false)); err != nil {
		return err
	}
	day := partDays[0]
	if _, err := env.Client.CreatePartition(ctx, table, client.PartitionSpec{"dt": day}, false); err != nil {
		return err
	}

	// Partition actions.
	for _, tc := range []struct {
		what    string
		spec    client.PartitionSpec
		code    codes.Code
		culprit string
	}{
		{"a value with '/'", client.PartitionSpec{"dt": "2026/12/01"}, codes.InvalidArgument, "2026/12/01"},
		{"a value with the reserved prefix __", client.PartitionSpec{"dt": "__20261201"}, codes.InvalidArgument, "__20261201"},
		{"an empty value", client.PartitionSpec{"dt": ""}, codes.InvalidArgument, "empty"},
		{"a spec without the partition key", client.PartitionSpec{"day": day}, codes.InvalidArgument, "dt"},
		{"a spec with a second key", client.PartitionSpec{"dt": day, "region": "eu"}, codes.InvalidArgument, ""},
		{"an existing partition", client.PartitionSpec{"dt": day}, codes.AlreadyExists, day},
	} {
		_, err := env.Client.CreatePartition(ctx, table, tc.spec, false)
		check(wantCode(fmt.Sprintf("create-partition %v of %s (%s)", tc.spec, table, tc.what), err, tc.code, tc.culprit))
	}
	missing := client.PartitionSpec{"dt": "20261231"}
	check(wantCode("drop-partition of a partition that does not exist", env.Client.DropPartition(ctx, table, missing, false), codes.NotFound, "dt=20261231"))
	check(env.Client.DropPartition(ctx, table, missing, true))
	_, err := env.Client.ListPartitions(ctx, plain, nil)
	check(wantCode("list-partitions of a table that is not partitioned", err, codes.FailedPrecondition, "partitioned"))
	_, err = env.Client.CreatePartition(ctx, plain, client.PartitionSpec{"id": "1"}, false)
	check(wantCode("create-partition of a table that is not partitioned", err, codes.FailedPrecondition, "partitioned"))

	// Writes: the refused batch leaves nothing in any partition.
	for _, tc := range []struct {
		what    string
		req     client.WriteRequest
		rows    [][]any
		code    codes.Code
		culprit string
	}{
		{"a row for a missing partition with create_partitions false",
			client.WriteRequest{Table: table, CreatePartitions: new(false)},
			[][]any{{int64(1), day, "x"}, {int64(2), "20261231", "y"}}, codes.NotFound, "dt=20261231"},
		{"a row whose dt is not a valid partition value",
			client.WriteRequest{Table: table},
			[][]any{{int64(1), day, "x"}, {int64(2), "2026-12/31", "y"}}, codes.InvalidArgument, "2026-12/31"},
	} {
		_, err := writePartRows(ctx, env, tc.req, tc.rows)
		check(wantCode(fmt.Sprintf("write to %s of %s", table, tc.what), err, tc.code, tc.culprit))
	}
	parts, err := env.Client.ListPartitions(ctx, table, nil)
	if err != nil {
		return err
	}
	if names := partitionNames(parts); len(names) != 1 || names[0] != day {
		wrong = append(wrong, fmt.Errorf("after the refused writes: partitions %v, want only %s", names, day))
	}
	plan, _, err := planParts(ctx, env, client.ScanRequest{Table: table})
	if err != nil {
		return err
	}
	if got, err := scanParts(ctx, env, plan); err != nil || len(got) != 0 {
		wrong = append(wrong, fmt.Errorf("after the refused writes the table reads %v (%v), want no rows", got, err))
	}
	// A NULL partition value names its column; the table's dt is nullable.
	nullable := env.Table("part_errors_null")
	spec := partSpec(nullable, nil)
	spec.Columns[1].Nullable = new(true)
	if _, err := createTable(ctx, env, spec); err != nil {
		return err
	}
	_, err = writePartRows(ctx, env, client.WriteRequest{Table: nullable}, [][]any{{int64(1), nil, "x"}})
	check(wantCode("write of a row whose partition key dt is NULL", err, codes.InvalidArgument, "dt"))

	// Reads.
	_, err = env.Client.Plan(ctx, client.ScanRequest{Table: table, Partitions: []string{"20261231"}})
	check(wantCode("scan of a partition that does not exist", err, codes.NotFound, "20261231"))
	_, err = env.Client.Plan(ctx, client.ScanRequest{Table: table, Startup: client.AtOffsets(map[int]int64{0: 0})})
	check(wantCode("scan of a partitioned table from bucket offsets (not partition_offsets)", err, codes.InvalidArgument, "partition_offsets"))
	_, err = env.Client.Plan(ctx, client.ScanRequest{Table: table, Startup: client.AtPartitionOffsets(client.PartitionOffsets{"20261231": {0: 0}})})
	check(wantCode("scan from the offsets of a partition that does not exist", err, codes.NotFound, "20261231"))
	return errors.Join(wrong...)
}
