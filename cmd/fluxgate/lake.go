package main

// fluxgate lake tier-now|snapshot|compact TABLE: the lake tier's actions
// (PROTOCOL.md §3, §7), printing the lake snapshot as JSON.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fluxgate-io/fluxgate/internal/cli"
)

func runLake(ctx context.Context, args []string) error {
	return cliError(lakeMain(ctx, args, osStdio()))
}

func lakeMain(ctx context.Context, args []string, std stdio) error {
	var conn connFlags
	fs := cli.NewFlagSet("lake", "lake tier-now|snapshot|compact DATABASE.TABLE")
	fs.SetOutput(std.err)
	conn.register(fs)
	pos, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	actions := map[string]string{"tier-now": "tier-now", "snapshot": "lake-snapshot", "compact": "compact-lake"}
	if len(pos) != 2 || actions[pos[0]] == "" {
		fs.Usage()
		return fmt.Errorf("lake: want tier-now, snapshot or compact, then a table")
	}
	c, err := conn.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	// Printed as the server sent it: snapshot ids are 64-bit and would be
	// rounded through a float64.
	var snap json.RawMessage
	if err := c.Action(ctx, actions[pos[0]], map[string]string{"table": pos[1]}, &snap); err != nil {
		return err
	}
	return cli.WriteJSON(std.out, snap)
}
