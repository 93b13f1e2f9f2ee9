package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v4"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		pos  string
		addr string
		x    bool
	}{
		{[]string{"T"}, "T", "", false},
		{[]string{"--addr", "a:1", "T"}, "T", "a:1", false},
		{[]string{"T", "--addr", "a:1", "-x"}, "T", "a:1", true},
		{[]string{"T", "-x", "U"}, "T U", "", true},
		{[]string{"-x", "--", "-T", "--addr"}, "-T --addr", "", true},
		{[]string{"-"}, "-", "", false},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		addr := fs.String("addr", "", "")
		x := fs.Bool("x", false, "")
		pos, err := ParseArgs(fs, tc.args)
		if err != nil || strings.Join(pos, " ") != tc.pos || *addr != tc.addr || *x != tc.x {
			t.Errorf("ParseArgs(%q) = %q addr %q x %v, %v", tc.args, pos, *addr, *x, err)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(&bytes.Buffer{})
	if _, err := ParseArgs(fs, []string{"T", "--nope"}); err == nil {
		t.Error("unknown flag accepted")
	}
}

// TestRun checks what Run makes of a command line: help asked for, a group
// given no command or an unknown one, a bad flag, a verb's usage error, and
// flags after arguments.
func TestRun(t *testing.T) {
	var got []string
	var x bool
	leaf := func() *ff.Command {
		fs := NewFlagSet("leaf")
		fs.BoolVar(&x, "x", false, "an x")
		fs.String("name", "n", "a `NAME`")
		return &ff.Command{Name: "leaf", Usage: "root leaf [-x] ARG", ShortHelp: "a leaf", Flags: fs,
			Exec: func(_ context.Context, args []string) error {
				if len(args) == 0 {
					return UsageError(errors.New("want an argument"))
				}
				got = args
				return errors.New("failed")
			}}
	}
	for _, tc := range []struct {
		args []string
		want error
		out  string // in what Run printed
	}{
		{[]string{"-h"}, flag.ErrHelp, "SUBCOMMANDS\n  leaf   a leaf\n"},
		{[]string{"help"}, flag.ErrHelp, "USAGE\n  root <command>\n"},
		{nil, ErrUsage, "USAGE\n  root <command>\n"},
		{[]string{"nope"}, ErrUsage, "root: unknown command \"nope\"\n"},
		{[]string{"leaf", "--help"}, flag.ErrHelp, "FLAGS\n  --name NAME   a NAME (default: n)\n  --x           an x\n"},
		{[]string{"leaf", "-y"}, ErrUsage, "root leaf: flag provided but not defined: -y\n"},
		{[]string{"leaf"}, ErrUsage, "root leaf: want an argument\n"},
	} {
		var out bytes.Buffer
		root := Group("root", "root <command>", "the root", leaf())
		if err := Run(context.Background(), root, tc.args, &out); !errors.Is(err, tc.want) || !strings.Contains(out.String(), tc.out) {
			t.Errorf("%q: %v, printed %q; want %v, printing %q", tc.args, err, out.String(), tc.want, tc.out)
		}
	}
	var out bytes.Buffer
	err := Run(context.Background(), Group("root", "root <command>", "", leaf()), []string{"leaf", "a", "-x", "b"}, &out)
	if err == nil || err.Error() != "failed" || errors.Is(err, ErrUsage) || !x || strings.Join(got, " ") != "a b" || out.Len() != 0 {
		t.Errorf("leaf a -x b: %v, args %q, x %v, printed %q", err, got, x, out.String())
	}
}
