package main

// fluxgate database create|list|drop: databases through the actions of
// PROTOCOL.md §3.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/peterbourgon/ff/v4"
)

func databaseCommand(std stdio) *ff.Command {
	list := databaseList(std)
	return cli.Group("database", "fluxgate database <command> [flags]", "create, list or drop databases",
		databaseCreate(std), list, cli.Alias("ls", list), databaseDrop(std))
}

func databaseCreate(std stdio) *ff.Command {
	var conn connFlags
	var ifNotExists bool
	fs := cli.NewFlagSet("create")
	conn.register(fs.FlagSet)
	fs.BoolVar(&ifNotExists, "if-not-exists", false, "succeed if the database exists already")
	return &ff.Command{Name: "create", Usage: "fluxgate database create D [--if-not-exists]", ShortHelp: "create a database", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			name, err := oneName(pos, "database name")
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

		}}
}

func databaseList(std stdio) *ff.Command {
	var conn connFlags
	var asJSON bool
	fs := cli.NewFlagSet("list")
	conn.register(fs.FlagSet)
	fs.BoolVar(&asJSON, "json", false, "print the list-databases result as JSON")
	return &ff.Command{Name: "list", Usage: "fluxgate database list [--json]", ShortHelp: "list the databases", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
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

		}}
}

func databaseDrop(std stdio) *ff.Command {
	var conn connFlags
	var ifExists, cascade bool
	fs := cli.NewFlagSet("drop")
	conn.register(fs.FlagSet)
	fs.BoolVar(&ifExists, "if-exists", false, "succeed if the database does not exist")
	fs.BoolVar(&cascade, "cascade", false, "drop the database's tables too (without it, a database with tables is not dropped)")
	return &ff.Command{Name: "drop", Usage: "fluxgate database drop D [--if-exists] [--cascade]", ShortHelp: "drop a database (with --cascade, and its tables)", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			name, err := oneName(pos, "database name")
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

		}}
}

// oneName returns the one positional argument, a name.
func oneName(pos []string, what string) (string, error) {
	if len(pos) != 1 {
		return "", cli.UsageError(errors.New("want one " + what))
	}
	return pos[0], nil
}
