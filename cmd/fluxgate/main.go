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
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/fluxgate-io/fluxgate/internal/cli"
)

// A verb is one subcommand. It parses its own flags from args.
type verb struct {
	summary string
	run     func(ctx context.Context, args []string) error
}

var verbs = map[string]verb{
	"serve":     {"run the server", runServe},
	"table":     {"create, list, describe or drop tables", runTable},
	"partition": {"create, list or drop the partitions of a partitioned table", runPartition},
	"database":  {"create, list or drop databases", runDatabase},
	"put":       {"write a CSV, JSON lines, Parquet or Arrow file to a table", runPut},
	"scan":      {"read a table: print it, or follow it as it grows", runScan},
	"lookup":    {"look keys up in a primary-key table (point, prefix, insert-if-not-exists)", runLookup},
	"bench":     {"run the standard workloads against an embedded server, each beside its baseline", runBench},
	"demo":      {"run the five stories end to end against an embedded server", runDemo},
	"auth":      {"hash a password or API token, or make a token or token secret, for serve --users", runAuth},
	"grant":     {"grant a principal operations on a database or table (admins)", runGrant},
	"revoke":    {"revoke a principal's operations on a database or table (admins)", runRevoke},
	"grants":    {"list the grants, of one principal or all (admins)", runGrants},
	"lake":      {"tier a lake-enabled table now, show its lake snapshot, or compact its lake", runLake},
	"repair":    {"cut a corrupt table log where the server says, with the server stopped", runRepair},

	"conformance": {"run the conformance scenarios against a server", runConformance},
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

// runMain runs the verb args name and returns the exit status: 0 on success
// and for help asked for (-h, --help, help), 2 for a usage error, 1 for a
// failure, which it prints to stderr.
func runMain(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stderr)
		return 0
	}
	v, ok := verbs[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "fluxgate: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := v.run(ctx, args[1:])
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, cli.ErrUsage):
		return 2
	}
	fmt.Fprintf(stderr, "fluxgate %s: %v\n", args[0], err)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: fluxgate <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(verbs))
	for name := range verbs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-12s %s\n", name, verbs[name].summary)
	}
	fmt.Fprintln(w, "\nRun \"fluxgate <command> -h\" for a command's flags.")
}
