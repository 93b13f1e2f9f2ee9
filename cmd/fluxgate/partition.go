package main

// fluxgate partition create|list|drop: the partitions of a partitioned table
// through the partition actions (PROTOCOL.md "Partitioned tables").

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/cli"
)

const partitionUsage = `usage: fluxgate partition <command> [flags]

commands:
  create  T key=value ... [--if-not-exists]   every partition key, e.g. dt=20261201 region=eu
  list    T [key=value ...] [--json]          all partitions, or those matching the values given
  drop    T key=value ... [--if-exists]       the partition and its data

Run "fluxgate partition <command> -h" for a command's flags.`

func runPartition(ctx context.Context, args []string) error {
	return cliError(partitionMain(ctx, args, osStdio()))
}

func partitionMain(ctx context.Context, args []string, std stdio) error {
	if len(args) == 0 {
		fmt.Fprintln(std.err, partitionUsage)
		return cli.ErrUsage
	}
	switch args[0] {
	case "create":
		return partitionCreate(ctx, args[1:], std)
	case "list", "ls":
		return partitionList(ctx, args[1:], std)
	case "drop":
		return partitionDrop(ctx, args[1:], std)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(std.err, partitionUsage)
		return flag.ErrHelp
	}
	fmt.Fprintln(std.err, partitionUsage)
	return fmt.Errorf("unknown partition command %q", args[0])
}

// partitionArgs parses T key=value ...; need says whether a spec is needed.
func partitionArgs(verb string, pos []string, need bool) (string, client.PartitionSpec, error) {
	if len(pos) == 0 || (need && len(pos) == 1) {
		return "", nil, fmt.Errorf("partition %s: want a table and key=value for each partition key", verb)
	}
	spec := client.PartitionSpec{}
	for _, kv := range pos[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return "", nil, fmt.Errorf("partition %s: %q: want key=value", verb, kv)
		}
		if _, dup := spec[k]; dup {
			return "", nil, fmt.Errorf("partition %s: key %q is given twice", verb, k)
		}
		spec[k] = v
	}
	return pos[0], spec, nil
}

// partitionCommand parses a partition command's flags (the connection's and
// those extra adds) and its T key=value ... arguments, dials, and runs do
// with the table, the spec and its key=value arguments as given.
func partitionCommand(ctx context.Context, verb, usage string, args []string, std stdio, needSpec bool,
	extra func(*flag.FlagSet), do func(c *client.Client, table string, spec client.PartitionSpec, given []string) error) error {
	var conn connFlags
	fs := cli.NewFlagSet("partition "+verb, usage)
	fs.SetOutput(std.err)
	conn.register(fs)
	extra(fs)
	pos, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	table, spec, err := partitionArgs(verb, pos, needSpec)
	if err != nil {
		fs.Usage()
		return err
	}
	c, err := conn.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return do(c, table, spec, pos[1:])
}

func partitionCreate(ctx context.Context, args []string, std stdio) error {
	var ifNotExists bool
	return partitionCommand(ctx, "create", "partition create T key=value ... [--if-not-exists]", args, std, true,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&ifNotExists, "if-not-exists", false, "succeed if the partition exists already")
		},
		func(c *client.Client, table string, spec client.PartitionSpec, _ []string) error {
			info, err := c.CreatePartition(ctx, table, spec, ifNotExists)
			if err != nil {
				return err
			}
			fmt.Fprintf(std.out, "created partition %s of %s, partition_id %d\n", info.PartitionName, table, info.PartitionID)
			return nil
		})
}

func partitionList(ctx context.Context, args []string, std stdio) error {
	var asJSON bool
	return partitionCommand(ctx, "list", "partition list T [key=value ...] [--json]", args, std, false,
		func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print the partitions as JSON") },
		func(c *client.Client, table string, partial client.PartitionSpec, _ []string) error {
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

func partitionDrop(ctx context.Context, args []string, std stdio) error {
	var ifExists bool
	return partitionCommand(ctx, "drop", "partition drop T key=value ... [--if-exists]", args, std, true,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&ifExists, "if-exists", false, "succeed if the partition does not exist")
		},
		func(c *client.Client, table string, spec client.PartitionSpec, given []string) error {
			if err := c.DropPartition(ctx, table, spec, ifExists); err != nil {
				return err
			}
			fmt.Fprintf(std.out, "dropped partition %s of %s\n", strings.Join(given, " "), table)
			return nil
		})
}
