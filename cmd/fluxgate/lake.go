package main

// fluxgate lake tier-now|snapshot|compact TABLE: the lake tier's actions
// (PROTOCOL.md §3, §7), printing the lake snapshot as JSON.

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/peterbourgon/ff/v4"
)

func lakeCommand(std stdio) *ff.Command {
	var conn connFlags
	fs := cli.NewFlagSet("lake")
	conn.register(fs.FlagSet)
	return &ff.Command{Name: "lake", Usage: "fluxgate lake tier-now|snapshot|compact DATABASE.TABLE", ShortHelp: "tier a lake-enabled table now, show its lake snapshot, or compact its lake", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			actions := map[string]string{"tier-now": "tier-now", "snapshot": "lake-snapshot", "compact": "compact-lake"}
			if len(pos) != 2 || actions[pos[0]] == "" {
				return cli.UsageError(errors.New("want tier-now, snapshot or compact, then a table"))
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

		}}
}
