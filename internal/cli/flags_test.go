package cli

import (
	"bytes"
	"flag"
	"strings"
	"testing"
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
