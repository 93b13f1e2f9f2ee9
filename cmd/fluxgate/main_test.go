package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"regexp"
	"strings"
	"testing"
)

// TestHelpExitsZero checks that help asked for, of fluxgate and of every
// verb, exits 0, while a missing or unknown command, or a bad flag, exits 2.
func TestHelpExitsZero(t *testing.T) {
	cases := [][]string{{"-h"}, {"--help"}, {"help"}, {"table", "create", "-h"}, {"table", "--help"}}
	for _, verb := range rootCommand(stdio{}).Subcommands {
		cases = append(cases, []string{verb.Name, "-h"}, []string{verb.Name, "--help"})
	}
	for _, args := range cases {
		if code := runMain(context.Background(), args, &bytes.Buffer{}); code != 0 {
			t.Errorf("fluxgate %s: exit %d, want 0", strings.Join(args, " "), code)
		}
	}
	for _, args := range [][]string{{}, {"nope"}, {"table"}, {"auth"}, {"put", "--nope"}, {"serve", "--max-message-bytes", "x"}} {
		var stderr bytes.Buffer
		if code := runMain(context.Background(), args, &stderr); code != 2 {
			t.Errorf("fluxgate %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
}

// TestServeHelpFormat checks that serve prints its flags the way the other
// verbs do.
func TestServeHelpFormat(t *testing.T) {
	help := func(verb string) string {
		var out bytes.Buffer
		if code := runMain(context.Background(), []string{verb, "-h"}, &out); code != 0 {
			t.Fatalf("%s -h: exit %d", verb, code)
		}
		return out.String()
	}
	layout := func(verb string) string {
		return "COMMAND\n  " + verb + " -- .*\n\nUSAGE\n  fluxgate " + verb + " .*\n\nFLAGS\n(  --[a-z-]+ .*\n)+$"
	}
	for _, verb := range []string{"serve", "scan"} {
		if out := help(verb); !regexp.MustCompile(layout(verb)).MatchString(out) {
			t.Errorf("%s usage:\n%s", verb, out)
		}
	}
	if out := help("serve"); !strings.Contains(out, "  --max-streams-per-client INT ") {
		t.Errorf("serve usage lacks --max-streams-per-client:\n%s", out)
	}
}

// TestPutHelpListsModes checks that put's usage line names every write mode.
func TestPutHelpListsModes(t *testing.T) {
	var stderr bytes.Buffer
	if err := putMain(context.Background(), []string{"--help"}, stdio{err: &stderr}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("put --help: %v", err)
	}
	_, usage, _ := strings.Cut(stderr.String(), "\nUSAGE\n")
	usage, _, _ = strings.Cut(usage, "\n")
	if !strings.Contains(usage, "--mode append|upsert|delete|changelog") {
		t.Errorf("put usage line %q does not list the changelog mode", usage)
	}
}
