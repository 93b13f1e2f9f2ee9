package main

// fluxgate conformance: runs the conformance scenarios (package conformance)
// against a running server. It cannot restart that server, so the scenarios
// that need a restart are reported as skipped.

import (
	"context"
	"fmt"
	"os"
	"regexp"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/conformance"
	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/peterbourgon/ff/v4"
)

func conformanceCommand(std stdio) *ff.Command {
	fs := cli.NewFlagSet("conformance")
	var conn connFlags
	conn.register(fs.FlagSet)
	filter := fs.String("run", "", "run only the scenarios whose name matches this regular expression")
	maxMessage := fs.Int("max-message-bytes", client.MaxMessageBytes, "the server's --max-message-bytes (err-message-too-large sends a batch just above it)")
	retention := fs.Duration("retention-interval", 0, "the server's --retention-interval, if at most 1s: scenarios that wait for log retention run only then")
	metrics := fs.String("metrics", "", "the server's Prometheus endpoint, e.g. http://127.0.0.1:8816/metrics: scenarios that count bytes read run only with it")
	list := fs.Bool("list", false, "list the scenarios and exit")
	return &ff.Command{Name: "conformance", Usage: "fluxgate conformance [--addr ADDR] [--run REGEXP] [--max-message-bytes N] [--retention-interval D] [--metrics URL]", ShortHelp: "run the conformance scenarios against a server", Flags: fs,
		Exec: func(ctx context.Context, rest []string) error {
			if len(rest) > 0 {
				return fmt.Errorf("unexpected argument %q", rest[0])
			}
			if _, err := regexp.Compile(*filter); err != nil {
				return fmt.Errorf("--run: %w", err)
			}
			if *list {
				for _, sc := range conformance.Scenarios() {
					fmt.Println(sc.Name)
				}
				return nil
			}
			c, err := conn.dial(ctx)
			if err != nil {
				return cliError(err)
			}
			defer c.Close()
			env := conformance.NewEnv(c, conn.addr)
			env.MaxMessageBytes = *maxMessage
			env.RetentionInterval = *retention
			env.MetricsURL = *metrics
			_, failed, _ := conformance.Run(ctx, env, *filter, os.Stdout)
			if failed > 0 {
				return fmt.Errorf("%d scenarios failed", failed)
			}
			return nil

		}}
}
