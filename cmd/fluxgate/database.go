package main

// fluxgate database create|list|drop: databases through the actions of
// PROTOCOL.md §3.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/fluxgate-io/fluxgate/internal/cli"
)

const databaseUsage = `usage: fluxgate database <command> [flags]

commands:
  create  D [--if-not-exists]
  list    [--json]
  drop    D [--if-exists] [--cascade]

Run "fluxgate database <command> -h" for a command's flags.`

func runDatabase(ctx context.Context, args []string) error {
	return cliError(databaseMain(ctx, args, osStdio()))
}

func databaseMain(ctx context.Context, args []string, std stdio) error {
	if len(args) == 0 {
		fmt.Fprintln(std.err, databaseUsage)
		return cli.ErrUsage
	}
	switch args[0] {
	case "create":
		return databaseCreate(ctx, args[1:], std)
	case "list", "ls":
		return databaseList(ctx, args[1:], std)
	case "drop":
		return databaseDrop(ctx, args[1:], std)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(std.err, databaseUsage)
		return flag.ErrHelp
	}
	fmt.Fprintln(std.err, databaseUsage)
	return fmt.Errorf("unknown database command %q", args[0])
}

func databaseCreate(ctx context.Context, args []string, std stdio) error {
	var conn connFlags
	var ifNotExists bool
	fs := cli.NewFlagSet("database create", "database create D [--if-not-exists]")
	fs.SetOutput(std.err)
	conn.register(fs)
	fs.BoolVar(&ifNotExists, "if-not-exists", false, "succeed if the database exists already")
	name, err := oneName(fs, args, "database create", "database name")
	if err != nil {
		return err
	}
	c, err := conn.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.CreateDatabase(ctx, name, ifNotExists); err != nil {
		return err
	}
	fmt.Fprintf(std.out, "created database %s\n", name)
	return nil
}

func databaseList(ctx context.Context, args []string, std stdio) error {
	var conn connFlags
	var asJSON bool
	fs := cli.NewFlagSet("database list", "database list [--json]")
	fs.SetOutput(std.err)
	conn.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print the list-databases result as JSON")
	pos, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("database list: unexpected arguments %q", pos)
	}
	c, err := conn.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	names, err := c.ListDatabases(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return cli.WriteJSON(std.out, map[string][]string{"databases": names})
	}
	if len(names) > 0 {
		fmt.Fprintln(std.out, strings.Join(names, "\n"))
	}
	return nil
}

func databaseDrop(ctx context.Context, args []string, std stdio) error {
	var conn connFlags
	var ifExists, cascade bool
	fs := cli.NewFlagSet("database drop", "database drop D [--if-exists] [--cascade]")
	fs.SetOutput(std.err)
	conn.register(fs)
	fs.BoolVar(&ifExists, "if-exists", false, "succeed if the database does not exist")
	fs.BoolVar(&cascade, "cascade", false, "drop the database's tables too (without it, a database with tables is not dropped)")
	name, err := oneName(fs, args, "database drop", "database name")
	if err != nil {
		return err
	}
	c, err := conn.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.DropDatabase(ctx, name, ifExists, cascade); err != nil {
		return err
	}
	fmt.Fprintf(std.out, "dropped database %s\n", name)
	return nil
}

// oneName parses args and returns its one positional argument, a name.
func oneName(fs *flag.FlagSet, args []string, verb, what string) (string, error) {
	pos, err := cli.ParseArgs(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		fs.Usage()
		return "", errors.New(verb + ": want one " + what)
	}
	return pos[0], nil
}
