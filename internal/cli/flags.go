package cli

import (
	"errors"
	"flag"
	"fmt"
)

// ErrUsage is what a verb returns when it printed its usage because its
// arguments name nothing to do; main exits 2 without another message. (Help
// asked for is flag.ErrHelp, and exits 0.)
var ErrUsage = errors.New("usage")

// NewFlagSet returns a flag set that reports errors instead of exiting, with
// a usage line.
func NewFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: fluxgate %s\n\nflags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// ParseArgs parses flags that may come before, between or after positional
// arguments, and returns the positional ones. "--" ends the flags.
func ParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := ParseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// ParseFlags is fs.Parse, with a flag it cannot parse (which fs has printed,
// with the usage) made an ErrUsage.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrUsage, err)
}
