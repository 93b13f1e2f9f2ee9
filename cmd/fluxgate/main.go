// Command fluxgate is the fluxgate server and its command-line client.
//
//	fluxgate serve [flags]          run the server
//	fluxgate table create|list|describe|drop ...
//	fluxgate partition create|list|drop T [k=v ...]
//	fluxgate database create|list|drop ...
//	fluxgate put --table T FILE     write CSV, JSON lines, Parquet or Arrow IPC
//	fluxgate scan --table T ...     read a table
//	fluxgate lookup --table T ...   look keys up in a primary-key table
//	fluxgate lake tier-now|snapshot|compact T   tier a table now, show its lake snapshot, compact its lake
//	fluxgate bench                  the standard workloads beside their baselines
//	fluxgate demo                   the five stories, end to end, on an embedded server
//	fluxgate conformance --addr A   run the conformance scenarios against a server
//	fluxgate auth hash-password|hash-token|new-token|new-secret   helpers for serve --users
//
// The commands are a tree of ff.Commands (github.com/peterbourgon/ff/v4),
// which selects the command, parses its flags and prints its help.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/peterbourgon/ff/v4"

	"github.com/fluxgate-io/fluxgate/bench"
	"github.com/fluxgate-io/fluxgate/demo"
	"github.com/fluxgate-io/fluxgate/internal/cli"
)

// rootCommand is fluxgate and its commands, reading and writing std.
func rootCommand(std stdio) *ff.Command {
	return cli.Group("fluxgate", "fluxgate <command> [flags]", "the fluxgate server and its command-line client",
		serveCommand(serve),
		tableCommand(std),
		partitionCommand(std),
		databaseCommand(std),
		putCommand(std),
		scanCommand(std),
		lookupCommand(std),
		lakeCommand(std),
		grantCommand("grant", std),
		grantCommand("revoke", std),
		grantsCommand(std),
		authCommand(std),
		repairCommand(std),
		bench.Command(std.out, std.err),
		demo.Command(std.out, std.err),
		conformanceCommand(std),
	)
}

func main() {
	// The first signal cancels ctx; serve uses it for a graceful stop. A second
	// signal exits at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		fmt.Fprintln(os.Stderr, "fluxgate: second signal, exiting now")
		os.Exit(130)
	}()
	os.Exit(runMain(ctx, os.Args[1:], os.Stderr))
}

// runMain runs the command args name and returns the exit status: 0 on
// success and for help asked for (-h, --help, help), 2 for a usage error, 1
// for a failure, which it prints to stderr.
func runMain(ctx context.Context, args []string, stderr io.Writer) int {
	std := osStdio()
	std.err = stderr
	root := rootCommand(std)
	err := cli.Run(ctx, root, args, stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, cli.ErrUsage):
		return 2
	}
	// Named by its verb, as the server's messages are: fluxgate table: ...
	verb := root.GetSelected()
	for verb.GetParent() != nil && verb.GetParent() != root {
		verb = verb.GetParent()
	}
	fmt.Fprintf(stderr, "fluxgate %s: %v\n", verb.Name, cliError(err))
	return 1
}
