package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestHelpExitsZero checks that help asked for, of fluxgate and of every
// verb, exits 0, while a missing or unknown command, or a bad flag, exits 2.
func TestHelpExitsZero(t *testing.T) {
	cases := [][]string{{"-h"}, {"--help"}, {"help"}, {"table", "create", "-h"}, {"table", "--help"}}
	for name := range verbs {
		cases = append(cases, []string{name, "-h"}, []string{name, "--help"})
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
	var out bytes.Buffer
	fs, _ := newServeFlagSet(&serveConfig{})
	fs.SetOutput(&out)
	fs.Usage()
	if !strings.HasPrefix(out.String(), "usage: fluxgate serve [flags]\n\nflags:\n") {
		t.Errorf("serve usage starts %q", out.String())
	}
}

// TestPutHelpListsModes checks that put's usage line names every write mode.
func TestPutHelpListsModes(t *testing.T) {
	var stderr bytes.Buffer
	if err := putMain(context.Background(), []string{"--help"}, stdio{err: &stderr}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("put --help: %v", err)
	}
	usage, _, _ := strings.Cut(stderr.String(), "\n")
	if !strings.Contains(usage, "--mode append|upsert|delete|changelog") {
		t.Errorf("put usage line %q does not list the changelog mode", usage)
	}
}
