package main

// fluxgate bench and fluxgate demo: the benchmark suite (package bench) and
// the demo stories (package demo), each on a server started in process.

import (
	"context"
	"os"

	"github.com/fluxgate-io/fluxgate/bench"
	"github.com/fluxgate-io/fluxgate/demo"
)

func runBench(ctx context.Context, args []string) error {
	return cliError(bench.Main(ctx, args, os.Stdout, os.Stderr))
}

func runDemo(ctx context.Context, args []string) error {
	return cliError(demo.Main(ctx, args, os.Stdout, os.Stderr))
}
