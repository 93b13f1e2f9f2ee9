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
)

func runGrant(ctx context.Context, args []string) error {
	return cliError(grantMain(ctx, "grant", args, osStdio()))
}

func runRevoke(ctx context.Context, args []string) error {
	return cliError(grantMain(ctx, "revoke", args, osStdio()))
}

// grantMain runs `fluxgate grant|revoke PRINCIPAL OPS ON database[.table]`,
// e.g. `fluxgate grant ann read,write on fluss.orders`.
func grantMain(ctx context.Context, action string, args []string, std stdio) error {
	var conn connFlags
	fs := cli.NewFlagSet(action, action+" PRINCIPAL read,write,... on DATABASE[.TABLE]")
	fs.SetOutput(std.err)
	conn.register(fs)
	pos, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 4 || pos[2] != "on" {
		fs.Usage()
		return fmt.Errorf("%s: want PRINCIPAL OPERATIONS on DATABASE[.TABLE]", action)
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
}

func runGrants(ctx context.Context, args []string) error {
	return cliError(grantsMain(ctx, args, osStdio()))
}

// grantsMain runs `fluxgate grants [PRINCIPAL]`: the grants as JSON.
func grantsMain(ctx context.Context, args []string, std stdio) error {
	var conn connFlags
	fs := cli.NewFlagSet("grants", "grants [PRINCIPAL]")
	fs.SetOutput(std.err)
	conn.register(fs)
	pos, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		fs.Usage()
		return errors.New("grants: want at most one principal")
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
}
