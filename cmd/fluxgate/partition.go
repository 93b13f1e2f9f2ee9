package main

// fluxgate partition create|list|drop: the partitions of a partitioned table
// through the partition actions (PROTOCOL.md "Partitioned tables").

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/peterbourgon/ff/v4"
)

func partitionCommand(std stdio) *ff.Command {
	list := partitionList(std)
	return cli.Group("partition", "fluxgate partition <command> [flags]", "create, list or drop the partitions of a partitioned table",
		partitionCreate(std), list, cli.Alias("ls", list), partitionDrop(std))
}

// partitionArgs parses T key=value ...; need says whether a spec is needed.
func partitionArgs(pos []string, need bool) (string, client.PartitionSpec, error) {
	if len(pos) == 0 || (need && len(pos) == 1) {
		return "", nil, errors.New("want a table and key=value for each partition key")
	}
	spec := client.PartitionSpec{}
	for _, kv := range pos[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return "", nil, fmt.Errorf("%q: want key=value", kv)
		}
		if _, dup := spec[k]; dup {
			return "", nil, fmt.Errorf("key %q is given twice", k)
		}
		spec[k] = v
	}
	return pos[0], spec, nil
}

// partitionLeaf is a partition command: the connection's flags and those
// extra adds, and T key=value ... arguments (need says whether a spec is
// needed); it dials and runs do with the table, the spec and its key=value
// arguments as given.
func partitionLeaf(name, usage, shortHelp string, needSpec bool, extra func(*flag.FlagSet),
	do func(ctx context.Context, c *client.Client, table string, spec client.PartitionSpec, given []string) error) *ff.Command {
	var conn connFlags
	fs := cli.NewFlagSet(name)
	conn.register(fs.FlagSet)
	extra(fs.FlagSet)
	return &ff.Command{Name: name, Usage: "fluxgate " + usage, ShortHelp: shortHelp, Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			table, spec, err := partitionArgs(pos, needSpec)
			if err != nil {
				return cli.UsageError(err)
			}
			c, err := conn.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			return do(ctx, c, table, spec, pos[1:])
		}}
}

func partitionCreate(std stdio) *ff.Command {
	var ifNotExists bool
	return partitionLeaf("create", "partition create T key=value ... [--if-not-exists]", "create a partition: every partition key, e.g. dt=20261201 region=eu", true,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&ifNotExists, "if-not-exists", false, "succeed if the partition exists already")
		},
		func(ctx context.Context, c *client.Client, table string, spec client.PartitionSpec, _ []string) error {
			info, err := c.CreatePartition(ctx, table, spec, ifNotExists)
			if err != nil {
				return err
			}
			fmt.Fprintf(std.out, "created partition %s of %s, partition_id %d\n", info.PartitionName, table, info.PartitionID)
			return nil
		})
}

func partitionList(std stdio) *ff.Command {
	var asJSON bool
	return partitionLeaf("list", "partition list T [key=value ...] [--json]", "list all partitions, or those matching the values given", false,
		func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print the partitions as JSON") },
		func(ctx context.Context, c *client.Client, table string, partial client.PartitionSpec, _ []string) error {
			parts, err := c.ListPartitions(ctx, table, partial)
			if err != nil {
				return err
			}
			if asJSON {
				if parts == nil {
					parts = []client.PartitionInfo{}
				}
				return cli.WriteJSON(std.out, map[string]any{"partitions": parts})
			}
			rows := make([][]string, len(parts))
			for i, p := range parts {
				rows[i] = []string{p.PartitionName, fmt.Sprint(p.PartitionID)}
			}
			return cli.WriteAligned(std.out, []string{"PARTITION", "ID"}, rows)
		})
}

func partitionDrop(std stdio) *ff.Command {
	var ifExists bool
	return partitionLeaf("drop", "partition drop T key=value ... [--if-exists]", "drop a partition and its data", true,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&ifExists, "if-exists", false, "succeed if the partition does not exist")
		},
		func(ctx context.Context, c *client.Client, table string, spec client.PartitionSpec, given []string) error {
			if err := c.DropPartition(ctx, table, spec, ifExists); err != nil {
				return err
			}
			fmt.Fprintf(std.out, "dropped partition %s of %s\n", strings.Join(given, " "), table)
			return nil
		})
}
