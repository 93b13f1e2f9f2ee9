package main

// fluxgate grant|revoke|grants: permissions through the grant, revoke and
// list-grants actions (PROTOCOL.md §8; admins only).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/peterbourgon/ff/v4"
)

var grantShortHelp = map[string]string{
	"grant":  "grant a principal operations on a database or table (admins)",
	"revoke": "revoke a principal's operations on a database or table (admins)",
}

// grantCommand is `fluxgate grant|revoke PRINCIPAL OPS ON database[.table]`,
// e.g. `fluxgate grant ann read,write on fluss.orders`.
func grantCommand(action string, std stdio) *ff.Command {
	var conn connFlags
	fs := cli.NewFlagSet(action)
	conn.register(fs.FlagSet)
	return &ff.Command{Name: action, Usage: "fluxgate " + action + " PRINCIPAL read,write,... on DATABASE[.TABLE]", ShortHelp: grantShortHelp[action], Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			if len(pos) != 4 || pos[2] != "on" {
				return cli.UsageError(errors.New("want PRINCIPAL OPERATIONS on DATABASE[.TABLE]"))
			}
			db, table, _ := strings.Cut(pos[3], ".")
			body := map[string]any{"principal": pos[0], "database": db, "operations": strings.Split(pos[1], ",")}
			if table != "" {
				body["table"] = table
			}
			c, err := conn.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.Action(ctx, action, body, nil); err != nil {
				return err
			}
			fmt.Fprintf(std.out, "%s: %s %s on %s\n", action, pos[0], pos[1], pos[3])
			return nil

		}}
}

// grantsMain runs `fluxgate grants [PRINCIPAL]`: the grants as JSON.
func grantsCommand(std stdio) *ff.Command {
	var conn connFlags
	fs := cli.NewFlagSet("grants")
	conn.register(fs.FlagSet)
	return &ff.Command{Name: "grants", Usage: "fluxgate grants [PRINCIPAL]", ShortHelp: "list the grants, of one principal or all (admins)", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			if len(pos) > 1 {
				return cli.UsageError(errors.New("want at most one principal"))
			}
			body := map[string]any{}
			if len(pos) == 1 {
				body["principal"] = pos[0]
			}
			c, err := conn.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			grants := []json.RawMessage{}
			if err := c.ListPages(ctx, client.ActionListGrants, body, "grants", func(g json.RawMessage) error {
				grants = append(grants, g)
				return nil
			}); err != nil {
				return err
			}
			return cli.WriteJSON(std.out, map[string]any{"grants": grants})

		}}
}
