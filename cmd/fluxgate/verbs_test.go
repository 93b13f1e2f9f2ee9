package main

import (
	"context"

	"github.com/peterbourgon/ff/v4"

	"github.com/fluxgate-io/fluxgate/internal/cli"
)

// The verbs as the tests run them: each command alone, reading and writing
// the stdio it is given, its error as Run returns it.
var (
	tableMain     = verbMain(tableCommand)
	databaseMain  = verbMain(databaseCommand)
	partitionMain = verbMain(partitionCommand)
	putMain       = verbMain(putCommand)
	scanMain      = verbMain(scanCommand)
	lookupMain    = verbMain(lookupCommand)
	lakeMain      = verbMain(lakeCommand)
	grantsMain    = verbMain(grantsCommand)
)

func verbMain(command func(stdio) *ff.Command) func(context.Context, []string, stdio) error {
	return func(ctx context.Context, args []string, std stdio) error {
		return cli.Run(ctx, command(std), args, std.err)
	}
}

func grantMain(ctx context.Context, action string, args []string, std stdio) error {
	return cli.Run(ctx, grantCommand(action, std), args, std.err)
}

func authMain(args []string, std stdio) error {
	return cli.Run(context.Background(), authCommand(std), args, std.err)
}
